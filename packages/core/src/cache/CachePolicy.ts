/**
 * When the embeddings cache is read and written, and what an answer says about it.
 *
 * **Details**
 *
 * - The workspace turns the cache on (`cache: true` in its settings); off, nothing is read or
 *   written and every answer says `bypass`.
 * - The request header `x-switchyard-cache` narrows it: `bypass` neither reads nor writes,
 *   `refresh` writes what the upstream answers without reading.
 * - A request that requires zero data retention (`provider.zdr: true`, or a workspace with
 *   `zdr: true`) is never written: a cache entry keeps a digest of the input and the vector derived
 *   from it beyond the request, which is retention. It may still read entries others wrote.
 *
 * @since 0.2.0
 */
import { Result } from "effect"

/**
 * The request's directive: the header's value, `default` when it is absent.
 *
 * @since 0.2.0
 */
export type Directive = "default" | "bypass" | "refresh"

/**
 * What an answer reports in its `x-switchyard-cache` header.
 *
 * @since 0.2.0
 */
export type Outcome = "hit" | "partial" | "miss" | "bypass"

/**
 * Whether a request reads and writes the cache.
 *
 * @since 0.2.0
 */
export interface Policy {
  readonly read: boolean
  readonly write: boolean
}

/**
 * The name of the request and response header.
 *
 * @since 0.2.0
 */
export const header = "x-switchyard-cache"

/**
 * Reads the header's value; anything but `bypass` or `refresh` (any case, trimmed) is an error
 * message naming the accepted values.
 *
 * @since 0.2.0
 */
export const directive = (value: string | undefined): Result.Result<Directive, string> => {
  if (value === undefined) return Result.succeed("default")
  const normalized = value.trim().toLowerCase()
  if (normalized === "bypass" || normalized === "refresh") return Result.succeed(normalized)
  return Result.fail(`${header} must be bypass or refresh`)
}

/**
 * The policy of one request.
 *
 * @since 0.2.0
 */
export const policy = (options: {
  readonly enabled: boolean
  readonly directive: Directive
  readonly zdr: boolean
}): Policy => {
  if (!options.enabled || options.directive === "bypass") return { read: false, write: false }
  return { read: options.directive === "default", write: !options.zdr }
}

/**
 * The outcome an answer reports, from how many of its items came from the cache.
 *
 * @since 0.2.0
 */
export const outcome = (policy: Policy, items: number, hits: number): Outcome => {
  if (!policy.read && !policy.write) return "bypass"
  if (hits === 0) return "miss"
  return hits === items ? "hit" : "partial"
}
