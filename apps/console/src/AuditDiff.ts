/**
 * What an audit entry changed: each top-level field whose value differs between `before` and
 * `after`, with both values as JSON (`null` for a side that has no such field, or no object).
 */
export interface FieldChange {
  readonly field: string
  readonly before: string | null
  readonly after: string | null
}

const fieldsOf = (value: unknown): Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : {}

const json = (record: Record<string, unknown>, field: string): string | null =>
  Object.hasOwn(record, field) ? JSON.stringify(record[field]) : null

export const changes = (before: unknown, after: unknown): ReadonlyArray<FieldChange> => {
  const [old, now] = [fieldsOf(before), fieldsOf(after)]
  const fields = [...new Set([...Object.keys(old), ...Object.keys(now)])].sort()
  return fields
    .map((field) => ({ field, before: json(old, field), after: json(now, field) }))
    .filter((change) => change.before !== change.after)
}
