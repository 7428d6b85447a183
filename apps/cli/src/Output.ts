import { Console, Effect } from "effect"
import { styleText } from "node:util"

export const stdoutIsTerminal = (): boolean => process.stdout.isTTY === true

export const stderrIsTerminal = (): boolean => process.stderr.isTTY === true

type Style = Parameters<typeof styleText>[0]

export const paint = (style: Style, text: string, stream: NodeJS.WriteStream = process.stdout): string =>
  styleText(style, text, { stream })

export interface Column<Row> {
  readonly header: string
  readonly value: (row: Row) => string
  readonly align?: "left" | "right"
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ESC of ANSI colour sequences, which take no width
const width = (text: string) => [...text.replace(/\u001b\[[0-9;]*m/gu, "")].length

const pad = (text: string, size: number, align: "left" | "right" = "left") => {
  const gap = " ".repeat(Math.max(0, size - width(text)))
  return align === "right" ? gap + text : text + gap
}

export const renderTable = <Row>(
  columns: ReadonlyArray<Column<Row>>,
  rows: ReadonlyArray<Row>,
  options: { readonly color: boolean } = { color: false }
): string => {
  const cells = rows.map((row) => columns.map((column) => column.value(row)))
  const sizes = columns.map((column, i) => Math.max(width(column.header), ...cells.map((line) => width(line[i]!))))
  const header = columns.map((column, i) => pad(column.header, sizes[i]!, column.align)).join("  ").trimEnd()
  const body = cells.map((line) => line.map((cell, i) => pad(cell, sizes[i]!, columns[i]!.align)).join("  ").trimEnd())
  return [options.color ? paint("bold", header) : header, ...body].join("\n")
}

const renderRecord = (pairs: ReadonlyArray<readonly [string, string]>, options: { readonly color: boolean } = { color: false }): string => {
  const size = Math.max(...pairs.map(([key]) => width(key)))
  return pairs.map(([key, value]) => `${options.color ? paint("dim", pad(`${key}`, size)) : pad(key, size)}  ${value}`).join("\n")
}

export const table = <Row>(columns: ReadonlyArray<Column<Row>>, rows: ReadonlyArray<Row>, empty = "(none)") =>
  Console.log(rows.length === 0 ? empty : renderTable(columns, rows, { color: stdoutIsTerminal() }))

/**
 * A list command's answer: `{ "data": rows }` for scripts with `--json`, else a table of `columns`
 * (or `empty` when there are no rows).
 */
export const list = <Row>(
  rows: ReadonlyArray<Row>,
  options: { readonly json: boolean; readonly columns: ReadonlyArray<Column<Row>>; readonly empty: string }
) => options.json ? json({ data: rows }) : table(options.columns, rows, options.empty)

export const record = (pairs: ReadonlyArray<readonly [string, string]>) =>
  Console.log(renderRecord(pairs, { color: stdoutIsTerminal() }))

export const json = (value: unknown) => Console.log(JSON.stringify(value, null, 2))

export const line = (text: string) => Console.log(text)

export const note = (text: string) => Effect.sync(() => process.stderr.write(`${text}\n`))

export const show = (value: unknown): string =>
  value === null || value === undefined ? "-" : typeof value === "string" ? value : JSON.stringify(value)

export const money = (value: number | null | undefined): string => {
  if (value === null || value === undefined) return "-"
  if (value === 0 || Math.abs(value) >= 1) return `$${value.toFixed(2)}`
  const fixed = value.toFixed(10).replace(/0+$/u, "")
  return `$${/\.\d$/u.test(fixed) ? `${fixed}0` : fixed}`
}

export const date = (value: string | null | undefined): string =>
  value === null || value === undefined ? "-" : value.replace("T", " ").replace(/\.\d+Z$/u, "Z")

/** A text on one line (runs of white space folded), cut to `size` characters with an ellipsis. */
export const clip = (text: string, size: number): string => {
  const flat = text.replace(/\s+/gu, " ").trim()
  return [...flat].length > size ? `${[...flat].slice(0, size - 1).join("")}…` : flat
}
