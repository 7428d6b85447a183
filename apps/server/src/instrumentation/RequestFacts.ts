import { Context, Effect } from "effect"

/**
 * One upstream attempt as the access log and the metrics see it.
 */
interface AttemptFact {
  readonly provider: string
  readonly outcome: "success" | "failure" | "skipped"
  readonly reason?: string | undefined
  readonly latency_ms?: number | undefined
}

/**
 * What the parts of the gateway a request passed through learnt about it, for its access line and
 * the metrics: filled in while the request runs, read once when it ends. Never a secret: the key
 * appears only as the first 12 hex digits of its public hash.
 */
export interface RequestFacts {
  /** First 12 hex digits of the caller's key hash. */
  key?: string
  /** The first 8 characters of a single sign-on session's id (not its cookie), for a person's call. */
  sso_session?: string
  /** The caller's workspace (for the workspace's list of recent failures; not on the access line). */
  workspace?: string
  generation_id?: string
  /** What the model call asked: `embeddings` or `rerank`. */
  task?: "embeddings" | "rerank"
  model?: string
  /** The model call's session (`session_id`, else `x-session-id`) and end user (`user`), as the caller named them. */
  session_id?: string
  user?: string
  /** The provider that served, or the last one tried. */
  provider?: string
  /** Upstream attempts in order. */
  attempts?: ReadonlyArray<AttemptFact>
  /** Credits charged, in USD. */
  cost?: number
  /** Tokens the answer reported, the cached items' included. */
  tokens?: number
  /** The part of `tokens` the embeddings cache answered (no upstream call counted them). */
  cached_tokens?: number
  byok?: boolean
  /** What the embeddings cache did (`x-switchyard-cache`); absent where no cache was consulted. */
  cache?: "hit" | "partial" | "miss" | "bypass"
  /** The key's own rate limit refused the request. */
  rate_limited?: boolean
  /** The store failed under the request (a 503): what was asked of it, and why it failed. */
  store_unavailable?: { readonly operation: string; readonly cause: unknown }
  /** The answer would not fit beside the memory held now (a 503): seconds until worth retrying. */
  memory_busy?: number
}

/**
 * The facts of the request being served. The access log middleware provides a fresh, empty
 * record for each request; outside a request there is none and {@link note} does nothing.
 */
export const CurrentRequestFacts = Context.Reference<RequestFacts | undefined>(
  "@switchyard/server/instrumentation/CurrentRequestFacts",
  { defaultValue: () => undefined }
)

/**
 * Adds facts to the current request's record (the access line and the metrics read them when the
 * request ends).
 */
export const note = (facts: RequestFacts): Effect.Effect<void> =>
  Effect.withFiber((fiber) => {
    const record = fiber.getRef(CurrentRequestFacts)
    if (record !== undefined) Object.assign(record, facts)
    return Effect.void
  })

/**
 * A way to add facts to the current request's record later, from outside its handler: an answer
 * written as it is made learns its tokens and cost at its end, and its access line waits for them.
 */
export const noteLater: Effect.Effect<(facts: RequestFacts) => void> = Effect.withFiber((fiber) => {
  const record = fiber.getRef(CurrentRequestFacts)
  return Effect.succeed((facts: RequestFacts) => {
    if (record !== undefined) Object.assign(record, facts)
  })
})
