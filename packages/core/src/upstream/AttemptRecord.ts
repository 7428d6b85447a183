/**
 * The upstream attempts of one served request, as its ledger row keeps them and
 * `GET /generation` lists them in `provider_responses`.
 *
 * **Details**
 *
 * One record per upstream call the request made, in the order they were made: the provider and
 * endpoint, the provider's HTTP status (`null` when no answer came: refused connection, timeout,
 * lost connection), the failure's reason (`null` for the attempt that served), the attempt's
 * latency, and the id the provider gave its answer (`upstream_id`, when the adapter parsed one).
 * A request the embeddings cache answered whole made no call: its list is empty.
 *
 * **Gotchas**
 *
 * Rows written before the gateway recorded attempts have no list at all (`undefined` from
 * {@link decode}): `GET /generation` answers `provider_responses: null` for them, not a guess.
 *
 * @since 0.3.0
 */
import { Option, Schema } from "effect"
import { VectorFacts } from "../schema/Activity.ts"
import type { AttemptReport } from "./Fallback.ts"


/**
 * One upstream call of a request.
 *
 * @since 0.3.0
 */
export const AttemptRecord = Schema.Struct({
  provider: Schema.String,
  endpoint: Schema.String,
  /** The provider's HTTP status; `null` when it never answered. */
  status: Schema.NullOr(Schema.Int),
  /** The failure's reason (`UpstreamError`'s vocabulary); `null` for the attempt that served. */
  reason: Schema.NullOr(Schema.String),
  latency_ms: Schema.NullOr(Schema.Finite),
  /** The provider's id of its answer; several ids comma-separated when the request went in batches. */
  upstream_id: Schema.NullOr(Schema.String),
  byok: Schema.Boolean,
  /** How the call was made when not as a live call: `provider_batch`, a line of a job at the provider's batch API. */
  mode: Schema.optionalKey(Schema.Literal("provider_batch")),
  /** The serving attempt's vectors (embeddings; absent on rows written before it was recorded). */
  vector: Schema.optionalKey(VectorFacts)
})

/**
 * @since 0.3.0
 */
export type AttemptRecord = typeof AttemptRecord.Type

const Stored = Schema.fromJsonString(Schema.Array(AttemptRecord))
const decodeStored = Schema.decodeUnknownOption(Stored)

/**
 * The records of a request's attempts, from the fallback runner's reports: the attempt that
 * served (`outcome: "success"`) carries `upstreamId`, the id its provider gave, and what it
 * answered in vectors (`vector`, embeddings). Skipped
 * attempts made no call and are left out.
 *
 * @since 0.3.0
 */
export const fromReports = (
  reports: ReadonlyArray<AttemptReport>,
  upstreamId: string | undefined,
  served: { readonly mode?: "provider_batch"; readonly vector?: typeof VectorFacts.Type } = {}
): Array<AttemptRecord> =>
  reports.flatMap((r): Array<AttemptRecord> =>
    r.outcome === "skipped" ? [] : [{
      provider: r.provider,
      endpoint: r.endpoint,
      status: r.outcome === "success" ? 200 : r.upstream_status ?? null,
      reason: r.outcome === "success" ? null : r.reason ?? null,
      latency_ms: r.latency_ms ?? null,
      upstream_id: r.outcome === "success" ? upstreamId ?? null : null,
      byok: r.byok,
      ...(served.mode !== undefined ? { mode: served.mode } : {}),
      ...(r.outcome === "success" && served.vector !== undefined ? { vector: served.vector } : {})
    }]
  )

/**
 * The ids of the answers of a request sent in several calls (batches), joined with commas in
 * call order, duplicates once; `undefined` when no call returned one.
 *
 * @since 0.3.0
 */
export const joinIds = (ids: ReadonlyArray<string | undefined>): string | undefined => {
  const distinct = [...new Set(ids.filter((id): id is string => id !== undefined && id !== ""))]
  return distinct.length === 0 ? undefined : distinct.join(",")
}

/**
 * The stored form of a request's attempts (a JSON array).
 *
 * @since 0.3.0
 */
export const encode = (records: ReadonlyArray<AttemptRecord>): string => JSON.stringify(records)

/**
 * The attempts of a stored row; `undefined` when the row has none (written before attempts were
 * recorded) or the text is not a list of attempts.
 *
 * @since 0.3.0
 */
export const decode = (stored: string | null): ReadonlyArray<AttemptRecord> | undefined =>
  stored === null ? undefined : Option.getOrUndefined(decodeStored(stored))
