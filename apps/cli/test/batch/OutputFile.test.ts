import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as OutputFile from "../../src/batch/OutputFile.ts"

const tempFile = (content: string) => {
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-cli-out-"))
  const path = NodePath.join(dir, "vectors.jsonl")
  Fs.writeFileSync(path, content)
  return path
}

describe("OutputFile", () => {
  it("collects the ids already written", () => {
    const content = Buffer.from(`${OutputFile.line("a", [1, 2])}\n${OutputFile.line(2, "AAA=")}\n`)
    assert.deepStrictEqual(OutputFile.scan(content), { done: new Set(["a", "2"]), completeBytes: content.length, partialBytes: 0 })
  })

  it("treats an unfinished last line as not written", () => {
    const complete = `${OutputFile.line("a", [1])}\n`
    const scanned = OutputFile.scan(Buffer.from(`${complete}{"id":"b","embe`))
    assert.deepStrictEqual(scanned, { done: new Set(["a"]), completeBytes: Buffer.byteLength(complete), partialBytes: 15 })
  })

  it("refuses a file that is not its own", () => {
    assert.deepStrictEqual(OutputFile.scan(Buffer.from("{\"id\":\"a\",\"embedding\":[1]}\nhello\n")), { brokenLine: 2 })
    assert.deepStrictEqual(OutputFile.scan(Buffer.from("{\"name\":\"a\"}\n")), { brokenLine: 1 })
  })

  it.effect("cuts an unfinished last line off before appending", () =>
    Effect.gen(function*() {
      const path = tempFile(`${OutputFile.line("a", [1])}\n{"id":"b","emb`)
      const existing = yield* OutputFile.prepare(path)
      assert.deepStrictEqual([...existing.done], ["a"])
      const write = yield* OutputFile.appender(path)
      yield* write([OutputFile.line("b", [2]), OutputFile.line("c", [3])])
      assert.deepStrictEqual(Fs.readFileSync(path, "utf8").trim().split("\n").map((l) => JSON.parse(l).id), ["a", "b", "c"])
    }).pipe(Effect.scoped))

  it.effect("explains how to recover from a foreign file", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(OutputFile.prepare(tempFile("not json\n")))
      assert.include(error.message, "line 1 is not a vector line")
      assert.include(error.hint ?? "", "another --out")
    }))
})
