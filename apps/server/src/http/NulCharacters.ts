import { BadRequest } from "@switchyard/core/schema/ApiError"
import { Effect } from "effect"

/**
 * Where a decoded body holds a string with U+0000: PostgreSQL text cannot store that character,
 * so such a value would fail in the store (a 500) instead of being refused (a 400). Paths are
 * written like the schema errors' (`external.user`, `tags[2]`).
 */
export const nulPaths = (value: unknown, path = ""): ReadonlyArray<string> => {
  if (typeof value === "string") return value.includes("\u0000") ? [path === "" ? "(root)" : path] : []
  if (Array.isArray(value)) return value.flatMap((item, i) => nulPaths(item, `${path}[${i}]`))
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => [
      ...(key.includes("\u0000") ? [path === "" ? key : `${path}.${key}`] : []),
      ...nulPaths(item, path === "" ? key : `${path}.${key}`)
    ])
  }
  return []
}

export const nulMessage = (paths: ReadonlyArray<string>) =>
  `Invalid request body: ${paths.map((p) => `${p}: must not contain the NUL character (U+0000)`).join("; ")}`

/**
 * Refuses a body with a NUL character in any string, as a schema error would.
 */
export const refuseNul = (payload: unknown): Effect.Effect<void, BadRequest> => {
  const paths = nulPaths(payload)
  return paths.length === 0
    ? Effect.void
    : Effect.fail(new BadRequest({
      message: nulMessage(paths),
      metadata: { kind: "payload", issues: paths.map((path) => ({ path, message: "must not contain the NUL character (U+0000)" })) }
    }))
}
