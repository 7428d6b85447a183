import { Effect, Stream } from "effect"

/** A file's chunk as the store keeps it: its number in the file, its lines and their text. */
export interface ChunkRow {
  readonly seq: number
  readonly lines: number
  readonly data: string
}

/**
 * A file's bytes cut into chunks of whole lines of about `chunkBytes` (a longer line is a chunk
 * of its own), each line ending in `\n` as written (a `\r` before it kept): what the store keeps,
 * so that a file is read back, and its lines run, a chunk at a time.
 */
export const chunkBytes = 256 * 1024

export interface Ingested {
  readonly bytes: number
  /** Lines holding something other than white space. */
  readonly lines: number
  readonly chunks: number
}

/**
 * Reads a byte stream into chunks, handing each to `write` as it fills; fails with `tooLarge`
 * once more than `maxBytes` arrived. Memory holds one chunk and the line being read.
 */
export const ingest = <E, E2, E3, R>(
  content: Stream.Stream<Uint8Array, E>,
  options: {
    readonly maxBytes: number
    readonly tooLarge: () => E2
    readonly write: (chunk: ChunkRow) => Effect.Effect<void, E3, R>
  }
): Effect.Effect<Ingested, E | E2 | E3, R> =>
  Effect.gen(function*() {
    const decoder = new TextDecoder("utf-8")
    let bytes = 0
    let lines = 0
    let seq = 0
    let partial = ""
    let pending: Array<string> = []
    let pendingBytes = 0
    const flush = Effect.suspend(() => {
      if (pending.length === 0) return Effect.void
      const chunk = { seq, lines: pending.length, data: pending.join("") }
      seq += 1
      pending = []
      pendingBytes = 0
      return options.write(chunk)
    })
    const take = (line: string) => {
      if (line.trim().length > 0) lines += 1
      pending.push(line)
      pendingBytes += line.length
      return pendingBytes >= chunkBytes ? flush : Effect.void
    }
    yield* Stream.runForEach(content, (piece) =>
      Effect.gen(function*() {
        bytes += piece.length
        if (bytes > options.maxBytes) return yield* Effect.fail(options.tooLarge())
        const text = partial + decoder.decode(piece, { stream: true })
        let start = 0
        let end = text.indexOf("\n", start)
        while (end !== -1) {
          yield* take(text.slice(start, end + 1))
          start = end + 1
          end = text.indexOf("\n", start)
        }
        partial = text.slice(start)
      }))
    const rest = partial + decoder.decode()
    if (rest.length > 0) yield* take(`${rest}\n`)
    yield* flush
    return { bytes, lines, chunks: seq }
  })

/**
 * Where a unit's output (or error) chunks are numbered from: above every chunk numbered by unit
 * (before units wrote several chunks, below the batch's line count) and every provider batch's
 * chunk (`Batch.limits.lines` + n), so that none of them meet; the file is read in this order.
 */
export const unitChunksFrom = 2 ** 30

/**
 * A unit's output (or error) lines as chunks of about `chunkBytes`, numbered from the unit's first
 * line (a unit has at most as many chunks as lines, so the numbers of two units never meet): no
 * string, and no value the store binds, holds a whole unit's lines (256 embeddings of 30 KB). Each
 * line's text is read once, as its chunk is made.
 */
export const unitChunks = (firstLine: number, lines: ReadonlyArray<{ readonly line: string }>): Array<ChunkRow> => {
  const chunks: Array<ChunkRow> = []
  let part: Array<string> = []
  let bytes = 0
  for (const [i, { line }] of lines.entries()) {
    part.push(line)
    bytes += line.length + 1
    if (bytes >= chunkBytes || i === lines.length - 1) {
      chunks.push({ seq: unitChunksFrom + firstLine - 1 + chunks.length, lines: part.length, data: `${part.join("\n")}\n` })
      part = []
      bytes = 0
    }
  }
  return chunks
}

/** A chunk's lines, each without its line end. */
export const linesOf = (data: string): Array<string> => {
  const lines = data.split("\n")
  lines.pop()
  return lines.map((line) => (line.endsWith("\r") ? line.slice(0, -1) : line))
}
