import { parse as parseCsv } from "csv-parse/sync"
import { Effect, Result } from "effect"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { Usage } from "../Failure.ts"

export const formats = ["txt", "jsonl", "csv"] as const

export type Format = typeof formats[number]

export interface Item {
  readonly id: string | number
  readonly key: string
  readonly text: string
}

export interface Fields {
  readonly text: string
  readonly id: string
}

export const formatOf = (path: string): Format => {
  const extension = NodePath.extname(path).toLowerCase()
  return extension === ".jsonl" || extension === ".ndjson" ? "jsonl" : extension === ".csv" ? "csv" : "txt"
}

const refuse = (message: string, hint?: string) => Result.fail(new Usage({ message, ...(hint === undefined ? {} : { hint }) }))

const collect = (
  rows: Iterable<{ readonly where: string; readonly id: string | number; readonly text: unknown }>
): Result.Result<Array<Item>, Usage> => {
  const items: Array<Item> = []
  const seen = new Map<string, string>()
  for (const row of rows) {
    if (typeof row.text !== "string" || row.text.trim().length === 0) {
      return refuse(`${row.where}: the text is missing or empty`)
    }
    const key = String(row.id)
    const first = seen.get(key)
    if (first !== undefined) {
      return refuse(`${row.where}: the id ${JSON.stringify(row.id)} was already used at ${first}`, "Ids must be unique: resuming skips inputs by id.")
    }
    seen.set(key, row.where)
    items.push({ id: row.id, key, text: row.text })
  }
  return Result.succeed(items)
}

const lines = (content: string) => content.split(/\r?\n/u)

const parseText = (content: string) =>
  collect(lines(content).flatMap((text, i) => (text.trim().length === 0 ? [] : [{ where: `line ${i + 1}`, id: i + 1, text }])))

const parseJsonl = (content: string, fields: Fields): Result.Result<Array<Item>, Usage> => {
  const rows: Array<{ where: string; id: string | number; text: unknown }> = []
  const all = lines(content)
  for (let i = 0; i < all.length; i++) {
    const line = all[i]!
    if (line.trim().length === 0) continue
    const where = `line ${i + 1}`
    let value: unknown
    try {
      value = JSON.parse(line)
    } catch {
      return refuse(`${where}: not valid JSON`, `Each line must be a JSON object with a "${fields.text}" field, or a JSON string.`)
    }
    if (typeof value === "string") {
      rows.push({ where, id: i + 1, text: value })
      continue
    }
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return refuse(`${where}: expected a JSON object or string`, `Each line must be a JSON object with a "${fields.text}" field, or a JSON string.`)
    }
    const record = value as Record<string, unknown>
    const id = record[fields.id]
    if (id !== undefined && typeof id !== "string" && typeof id !== "number") {
      return refuse(`${where}: "${fields.id}" must be a string or a number`)
    }
    if (!(fields.text in record)) {
      return refuse(`${where}: no "${fields.text}" field`, "Name the text field with --text-field.")
    }
    rows.push({ where, id: id ?? i + 1, text: record[fields.text] })
  }
  return collect(rows)
}

const parseCsvContent = (content: string, fields: Fields): Result.Result<Array<Item>, Usage> => {
  let records: Array<Array<string>>
  try {
    records = parseCsv(content, { bom: true, skip_empty_lines: true, relax_quotes: false })
  } catch (error) {
    return refuse(`not valid CSV: ${error instanceof Error ? error.message : String(error)}`)
  }
  const [header, ...rows] = records
  if (header === undefined) return Result.succeed([])
  const textColumn = header.indexOf(fields.text)
  if (textColumn === -1) {
    return refuse(`the header has no "${fields.text}" column (it has ${header.map((h) => JSON.stringify(h)).join(", ")})`, "Name the text column with --text-field.")
  }
  const idColumn = header.indexOf(fields.id)
  return collect(rows.map((row, i) => ({
    where: `row ${i + 1}`,
    id: idColumn === -1 || row[idColumn] === undefined || row[idColumn] === "" ? i + 1 : row[idColumn]!,
    text: row[textColumn]
  })))
}

export const parse = (content: string, format: Format, fields: Fields): Result.Result<Array<Item>, Usage> =>
  format === "txt" ? parseText(content) : format === "jsonl" ? parseJsonl(content, fields) : parseCsvContent(content, fields)

const readAll = (path: string) =>
  Effect.tryPromise({
    try: async () => {
      if (path !== "-") return await Fs.promises.readFile(path, "utf8")
      const chunks: Array<Buffer> = []
      for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array))
      return Buffer.concat(chunks).toString("utf8")
    },
    catch: (error) =>
      new Usage({
        message: `Cannot read ${path === "-" ? "standard input" : path}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(error)}`
      })
  })

export const read = (path: string, format: Format, fields: Fields) =>
  Effect.flatMap(readAll(path), (content) =>
    Effect.fromResult(parse(content, format, fields)).pipe(
      Effect.mapError((error) =>
        new Usage({
          message: `${path === "-" ? "stdin" : path}, ${error.message}`,
          ...(error.hint === undefined ? {} : { hint: error.hint })
        })
      )
    ))
