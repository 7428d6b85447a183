import type { EmbeddingProvider } from "@switchyard/core"
import type * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as UpstreamInput from "../providers/UpstreamInput.ts"
import type { GatewayMetricsShape } from "../observability/GatewayMetrics.ts"
import type { ForwardedResult } from "../providers/OpenAiCompatible.ts"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import type { EmbeddingCache, Entry } from "./EmbeddingCache.ts"

/**
 * Everything that decides which vector an endpoint returns for an item, but the item: entries are
 * shared only within one workspace and one vector space. The endpoint is part of it: an entry is
 * what that endpoint answered, so a hit is credited to it and one answer never mixes endpoints.
 */
export interface VectorSpace {
  readonly workspaceId: string
  /** The endpoint's id (`Candidates.endpointId`). */
  readonly endpoint: string
  readonly model: string
  readonly upstreamModel: string
  readonly quantization: string
  /** The width the endpoint was asked for, or its own when it was asked for none. */
  readonly dimensions: number
  /** The input type the endpoint was sent, if any. */
  readonly inputType: string | undefined
  /** The quantized type the provider made, when it made one: the entries are that type's numbers. */
  readonly dtype?: string
  /** The long-input mode and limit, when not `none`: a cut or windowed vector is another vector. */
  readonly truncate?: string
}

/**
 * An upstream answer merged with cached vectors. `promptTokens` and `totalTokens` are what the
 * upstream counted (and charges for); `cachedTokens` what the cached items were billed for when
 * they were embedded.
 */
export interface CachedResult extends ForwardedResult {
  readonly cachedItems: number
  readonly cachedTokens: number
  /** The bytes of the cached vectors served, as stored. */
  readonly cachedBytes: number
  /** The items that went to the upstream; none when the cache served every one. */
  readonly sent: EmbeddingProvider.EmbeddingInput | undefined
}

/** The digest of one item, computed once however many endpoints it is looked up at. */
const itemDigest = (item: string): string => createHash("sha256").update(item).digest("base64url")

const keyOf = (space: VectorSpace, digest: string): string =>
  createHash("sha256")
    .update(JSON.stringify([
      2,
      space.workspaceId,
      space.endpoint,
      space.model,
      space.upstreamModel,
      space.quantization,
      space.dimensions,
      space.inputType ?? null,
      digest,
      // Absent for floats of inputs under `truncate: "none"`: the keys written before types existed.
      ...(space.dtype !== undefined || space.truncate !== undefined ? [space.dtype ?? "float", space.truncate ?? "none"] : [])
    ]))
    .digest("base64url")

/**
 * Splits `total` tokens over items in proportion to their weights, in whole tokens that add up
 * to `total` (largest remainder).
 */
export const apportion = (total: number, weights: ReadonlyArray<number>): Array<number> => {
  const sum = weights.reduce((a, b) => a + b, 0)
  if (weights.length === 0) return []
  if (sum === 0) return apportion(total, weights.map(() => 1))
  const exact = weights.map((w) => (total * w) / sum)
  const shares = exact.map(Math.floor)
  let left = total - shares.reduce((a, b) => a + b, 0)
  const byRemainder = exact.map((x, i) => [x - Math.floor(x), i] as const).sort((a, b) => b[0] - a[0] || a[1] - b[1])
  for (const [, i] of byRemainder) {
    if (left <= 0) break
    shares[i]! += 1
    left -= 1
  }
  return shares
}

const uncached = (result: ForwardedResult, sent: EmbeddingProvider.EmbeddingInput): CachedResult => ({
  ...result,
  cachedItems: 0,
  cachedTokens: 0,
  cachedBytes: 0,
  sent
})

/**
 * What the cache holds for each item of an input in one vector space: the keys, and the entry
 * found for each (none when the policy does not read).
 */
export interface Lookup {
  readonly keys: ReadonlyArray<string>
  readonly hits: ReadonlyArray<Entry | undefined>
}

/** The bytes an entry's vector takes, as stored (the upstream's JSON number text, or base64). */
const bytesOf = (entry: Entry) => VectorEncoding.storedBytes(entry.vector)

/** Where the cache's writes are counted (its reads are counted once per request, by the caller). */
export type CacheMetrics = Pick<GatewayMetricsShape, "cacheWrite">

/**
 * Looks every item of each input up in its vector space, all in one read of the store (nothing
 * is read when the policy does not read): one {@link Lookup} per space, in the order given.
 */
export const lookupAll = (options: {
  readonly cache: EmbeddingCache["Service"]
  readonly policy: CachePolicy.Policy
  readonly spaces: ReadonlyArray<{ readonly space: VectorSpace; readonly input: EmbeddingProvider.EmbeddingInput }>
}): Effect.Effect<ReadonlyArray<Lookup>> =>
  Effect.gen(function*() {
    const { cache, policy, spaces } = options
    const digests = new Map<EmbeddingProvider.EmbeddingInput, ReadonlyArray<string>>()
    const keyed = spaces.map(({ input, space }) => {
      let items = digests.get(input)
      if (items === undefined) {
        items = UpstreamInput.itemTexts(input).map(itemDigest)
        digests.set(input, items)
      }
      return items.map((digest) => keyOf(space, digest))
    })
    if (!policy.read) return keyed.map((keys) => ({ keys, hits: keys.map(() => undefined) }))
    const found = yield* cache.getMany(keyed)
    return keyed.map((keys, i) => ({ keys, hits: found[i]! }))
  })

// The hits as the cache keeps them: the answer's own type and encoding come after (`UpstreamAttempt.finish`).
const served = (found: Lookup) => {
  const embeddings: Array<VectorEncoding.Forwarded> = []
  let cachedTokens = 0
  let cachedBytes = 0
  found.hits.forEach((hit, index) => {
    if (hit === undefined) return
    embeddings.push({ index, embedding: hit.vector })
    cachedTokens += hit.tokens
    cachedBytes += bytesOf(hit)
  })
  return { embeddings, cachedTokens, cachedBytes }
}

/**
 * The answer when the cache holds every item of the lookup, as kept; `undefined` when any item
 * is missing (or the input is empty).
 */
const whole = (found: Lookup): CachedResult | undefined => {
  if (found.keys.length === 0 || found.hits.some((hit) => hit === undefined)) return undefined
  const { cachedBytes, cachedTokens, embeddings } = served(found)
  return { embeddings, promptTokens: 0, totalTokens: 0, cachedItems: found.keys.length, cachedTokens, cachedBytes, sent: undefined }
}

/**
 * The first attempt, in plan order, whose every item the cache holds, with the answer made of
 * them; `undefined` when no endpoint holds them all.
 */
export const firstWhole = <A extends { readonly candidate: { readonly id: string } }>(
  attempts: ReadonlyArray<A>,
  found: ReadonlyMap<string, Lookup>
): { readonly attempt: A; readonly value: CachedResult } | undefined => {
  for (const attempt of attempts) {
    const one = found.get(attempt.candidate.id)
    const value = one === undefined ? undefined : whole(one)
    if (value !== undefined) return { attempt, value }
  }
  return undefined
}

/**
 * Embeds an input through the cache: items found are served from it, only the others go to
 * `call` (which checks what the upstream answered), and what it answers is written back; vectors
 * keep their input indexes. `found` is a lookup of this input in this space made before, reused
 * rather than read again. Each write that the store took counts its bytes in the metrics.
 */
export const embed = <E, R>(options: {
  readonly cache: EmbeddingCache["Service"]
  readonly metrics: CacheMetrics
  readonly policy: CachePolicy.Policy
  readonly space: VectorSpace
  readonly input: EmbeddingProvider.EmbeddingInput
  readonly call: (input: EmbeddingProvider.EmbeddingInput) => Effect.Effect<ForwardedResult, E, R>
  readonly found?: Lookup | undefined
}): Effect.Effect<CachedResult, E, R> =>
  Effect.gen(function*() {
    const { cache, call, input, metrics, policy } = options
    if (!policy.read && !policy.write) return uncached(yield* call(input), input)
    const found = options.found ?? (yield* lookupAll({ cache, policy, spaces: [options] }))[0]!
    const { keys, hits } = found
    const missing: Array<number> = []
    hits.forEach((hit, i) => {
      if (hit === undefined) missing.push(i)
    })
    const write = (entries: ReadonlyArray<readonly [string, Entry]>) =>
      policy.write
        // A write without a read is a `refresh`: what other processes keep of these keys is dropped.
        ? Effect.map(cache.setMany(entries, { replace: !policy.read }), (stored) => {
          if (stored) metrics.cacheWrite(entries.reduce((n, [, entry]) => n + bytesOf(entry), 0))
        })
        : Effect.void
    if (missing.length === keys.length) {
      const result = yield* call(input)
      yield* write(entriesOf(result, input, keys))
      return uncached(result, input)
    }
    const cachedItems = keys.length - missing.length
    if (missing.length === 0) return whole(found)!
    const { cachedBytes, cachedTokens, embeddings } = served(found)
    const part = UpstreamInput.pick(input, missing)
    const result = yield* call(part)
    yield* write(entriesOf(result, part, missing.map((i) => keys[i]!)))
    for (const e of result.embeddings) embeddings.push({ index: missing[e.index]!, embedding: e.embedding })
    return { ...result, embeddings, cachedItems, cachedTokens, cachedBytes, sent: part }
  })

// The upstream counts tokens per request, not per item: each item keeps its share of the count.
const entriesOf = (
  result: ForwardedResult,
  input: EmbeddingProvider.EmbeddingInput,
  keys: ReadonlyArray<string>
): Array<readonly [string, Entry]> => {
  const weights = keys.map((_, i) => UpstreamInput.tokenBound(UpstreamInput.pick(input, [i])).tokens)
  const tokens = apportion(result.promptTokens, weights)
  return result.embeddings.map((e) => [keys[e.index]!, { vector: VectorEncoding.keep(e.embedding), tokens: tokens[e.index]! }] as const)
}
