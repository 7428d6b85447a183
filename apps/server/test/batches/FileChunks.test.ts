import * as Batch from "@switchyard/core/schema/Batch"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import type { ChunkRow } from "../../src/store/batches/FileChunks.ts"
import * as FileChunks from "../../src/store/batches/FileChunks.ts"

const ingest = (pieces: ReadonlyArray<string | Uint8Array>, maxBytes = 1_000_000) => {
  const chunks: Array<ChunkRow> = []
  return FileChunks.ingest(Stream.fromIterable(pieces.map((p) => (typeof p === "string" ? new TextEncoder().encode(p) : p))), {
    maxBytes,
    tooLarge: () => "too large" as const,
    write: (chunk) => Effect.sync(() => void chunks.push(chunk))
  }).pipe(Effect.map((ingested) => ({ ingested, chunks })))
}

describe("FileChunks", () => {
  it.effect("cuts a stream into chunks of whole lines, wherever the pieces break, keeping the bytes", () =>
    Effect.gen(function*() {
      const line = `${JSON.stringify({ custom_id: "x".repeat(1000) })}\r\n`
      const text = line.repeat(600)
      const pieces = Array.from({ length: Math.ceil(text.length / 777) }, (_, i) => text.slice(i * 777, (i + 1) * 777))
      const { ingested, chunks } = yield* ingest([...pieces, "\n", "last line without end"])
      assert.strictEqual(ingested.lines, 601)
      assert.isAbove(chunks.length, 1)
      assert.strictEqual(ingested.chunks, chunks.length)
      assert.deepStrictEqual(chunks.map((c) => c.seq), chunks.map((_, i) => i))
      for (const chunk of chunks.slice(0, -1)) {
        assert.isAtLeast(chunk.data.length, FileChunks.chunkBytes)
        assert.isBelow(chunk.data.length, FileChunks.chunkBytes + line.length)
      }
      assert.strictEqual(chunks.map((c) => c.data).join(""), `${text}\nlast line without end\n`)
      const lines = chunks.flatMap((c) => FileChunks.linesOf(c.data))
      assert.strictEqual(lines.length, 602)
      assert.strictEqual(lines[0], line.slice(0, -2))
      assert.strictEqual(lines[600], "")
      assert.strictEqual(lines[601], "last line without end")
    }))

  it.effect("keeps a multi-byte character cut between two pieces whole", () =>
    Effect.gen(function*() {
      const bytes = new TextEncoder().encode("{\"t\":\"é€\"}\n")
      const { chunks } = yield* ingest([bytes.slice(0, 7), bytes.slice(7)])
      assert.strictEqual(chunks[0]!.data, "{\"t\":\"é€\"}\n")
    }))

  it.effect("fails once more than the limit arrived, without reading further", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(ingest(["a\n".repeat(10), "b\n".repeat(10), "c\n"], 30))
      assert.strictEqual(error, "too large")
    }))

  it("cuts a unit's lines into chunks numbered from its first line, past every unit and provider batch number", () => {
    const line = "x".repeat(30_000)
    const lines = Array.from({ length: 20 }, (_, i) => `${i}${line}`)
    const chunks = FileChunks.unitChunks(257, lines.map((line) => ({ line })))
    assert.isAbove(chunks.length, 1)
    assert.isAtMost(chunks.length, lines.length)
    assert.deepStrictEqual(chunks.map((c) => c.seq), chunks.map((_, i) => FileChunks.unitChunksFrom + 256 + i))
    assert.isAbove(FileChunks.unitChunksFrom, Batch.limits.lines * 2)
    for (const chunk of chunks.slice(0, -1)) assert.isBelow(chunk.data.length, FileChunks.chunkBytes + line.length + 4)
    assert.strictEqual(chunks.reduce((n, c) => n + c.lines, 0), 20)
    assert.deepStrictEqual(chunks.flatMap((c) => FileChunks.linesOf(c.data)), lines)
    // The next unit's chunks start after this unit's last line: the numbers never meet.
    assert.isBelow(chunks.at(-1)!.seq, FileChunks.unitChunksFrom + 256 + lines.length)
    assert.deepStrictEqual(FileChunks.unitChunks(1, []), [])
  })
})
