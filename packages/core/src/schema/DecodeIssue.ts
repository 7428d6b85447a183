/**
 * Readable decode failures: each broken rule as `{ path, message }`, with the path written the
 * way a person would (`provider.max_price.prompt`, `input[3]`).
 *
 * **When to use**
 *
 * To turn a `SchemaError` into the message of a 400 (request bodies) or of a config-file error,
 * so the reader sees which field broke which rule.
 *
 * @since 0.1.0
 */
import { type Schema, SchemaIssue } from "effect"

/**
 * One broken rule.
 *
 * @since 0.1.0
 */
export interface DecodeIssue {
  readonly path: string
  readonly message: string
}

/**
 * Writes a property path as `a.b[0].c`; keys that are not identifiers are quoted
 * (`headers["x-api-key"]`). The empty path is `(root)`.
 *
 * @since 0.1.0
 */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const key of path) {
    if (typeof key === "number") out += `[${key}]`
    else if (typeof key === "symbol") out += `[${String(key)}]`
    else if (/^[A-Za-z_$][A-Za-z0-9_$]*$/u.test(key)) out += out === "" ? key : `.${key}`
    else out += `[${JSON.stringify(key)}]`
  }
  return out === "" ? "(root)" : out
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1()

/**
 * Every broken rule of a decode failure, deduplicated, in the order found.
 *
 * @since 0.1.0
 */
export const fromSchemaError = (error: Schema.SchemaError): ReadonlyArray<DecodeIssue> => {
  const seen = new Set<string>()
  const out: Array<DecodeIssue> = []
  for (const issue of formatter(error.issue).issues) {
    const path = formatPath((issue.path ?? []).map((p) => (typeof p === "object" ? p.key : p)))
    const key = `${path}\u0000${issue.message}`
    if (seen.has(key)) continue
    seen.add(key)
    out.push({ path, message: issue.message })
  }
  return out
}

/**
 * One line naming every broken rule: `model: Missing key; input[1]: Expected ...`.
 *
 * @since 0.1.0
 */
export const summarize = (issues: ReadonlyArray<DecodeIssue>): string =>
  issues.map((i) => `${i.path}: ${i.message}`).join("; ")
