/**
 * What a failed upstream attempt means for the rest of the request: try the next provider in
 * the plan, or stop and answer the caller now.
 *
 * **Details**
 *
 * This vocabulary is deliberately separate from the failure's `reason` (see `UpstreamError`),
 * following Bifrost's `FailureClass`: the reason says what happened and decides the HTTP status
 * and the metrics label; the class drives fallback. They usually agree, but not always: a 400
 * saying "input too long for this model's context" and a 400 saying "input must not be empty"
 * share a reason (`InvalidRequest`, answered as 400 if it is the last word), yet only the first
 * is worth trying on another provider, whose limit may be larger. Deriving fallback from the
 * status alone would either give up too early or hammer every provider with a request none
 * can serve.
 *
 * - `next_provider`: the failure is about this provider (its credentials, capacity, limits,
 *   health); another provider may succeed.
 * - `stop`: the failure is about the request itself, or carries no signal the gateway
 *   understands; no other provider would fare better.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * @since 0.1.0
 */
export const FailureClass = Schema.Literals(["next_provider", "stop"])

/**
 * @since 0.1.0
 */
export type FailureClass = typeof FailureClass.Type
