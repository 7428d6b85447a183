import { Effect } from "effect"
import * as Fs from "node:fs"
import { Usage } from "../Failure.ts"

export interface Existing {
  readonly done: ReadonlySet<string>
  readonly completeBytes: number
  readonly partialBytes: number
}

export const scan = (content: Buffer): Existing | { readonly brokenLine: number } => {
  const done = new Set<string>()
  const end = content.lastIndexOf(0x0a) + 1
  const complete = content.subarray(0, end).toString("utf8").split("\n")
  for (let i = 0; i < complete.length; i++) {
    const line = complete[i]!
    if (line.trim().length === 0) continue
    try {
      const value = JSON.parse(line) as { readonly id?: unknown; readonly embedding?: unknown }
      if ((typeof value.id !== "string" && typeof value.id !== "number") || value.embedding === undefined) return { brokenLine: i + 1 }
      done.add(String(value.id))
    } catch {
      return { brokenLine: i + 1 }
    }
  }
  return { done, completeBytes: end, partialBytes: content.length - end }
}

export const prepare = (path: string) =>
  Effect.gen(function*() {
    const content = yield* Effect.try({
      try: () => (Fs.existsSync(path) ? Fs.readFileSync(path) : Buffer.alloc(0)),
      catch: (error) => new Usage({ message: `Cannot read ${path}: ${String(error)}` })
    })
    const existing = scan(content)
    if ("brokenLine" in existing) {
      return yield* new Usage({
        message: `${path} line ${existing.brokenLine} is not a vector line written by switchyard`,
        hint: "Choose another --out, or remove the file to start over."
      })
    }
    if (existing.partialBytes > 0) {
      yield* Effect.try({
        try: () => Fs.truncateSync(path, existing.completeBytes),
        catch: (error) => new Usage({ message: `Cannot repair ${path}: ${String(error)}` })
      })
    }
    return existing
  })

export const line = (id: string | number, embedding: ReadonlyArray<number> | string) => JSON.stringify({ id, embedding })

export const appender = (path: string) =>
  Effect.map(
    Effect.acquireRelease(
      Effect.try({
        try: () => Fs.openSync(path, "a"),
        catch: (error) => new Usage({ message: `Cannot write ${path}: ${String(error)}` })
      }),
      (fd) => Effect.sync(() => Fs.closeSync(fd))
    ),
    (fd) => (lines: ReadonlyArray<string>) => Effect.sync(() => writeAll(fd, Buffer.from(lines.map((l) => `${l}\n`).join(""), "utf8")))
  )

const writeAll = (fd: number, bytes: Buffer) => {
  let offset = 0
  while (offset < bytes.length) offset += Fs.writeSync(fd, bytes, offset, bytes.length - offset)
}
