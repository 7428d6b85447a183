/**
 * The dry run of an embeddings request: the route the gateway would take and what it would cost,
 * without calling any provider. Also the shape of the routing explanation a real request carries
 * when it asks for one.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * What the plan did with one endpoint (see `RoutePlan.CandidateReport`).
 *
 * @since 0.1.0
 */
export const CandidateReport = Schema.Struct({
  id: Schema.String,
  provider: Schema.String,
  variant: Schema.String,
  prompt_price: Schema.String,
  search_price: Schema.optionalKey(Schema.String),
  status: Schema.Literals(["attempt", "excluded", "unused"]),
  rank: Schema.optionalKey(Schema.Int),
  excluded_by: Schema.optionalKey(Schema.String),
  detail: Schema.optionalKey(Schema.String),
  order_match: Schema.optionalKey(Schema.String),
  weight: Schema.optionalKey(Schema.Finite),
  sort_key: Schema.optionalKey(Schema.NullOr(Schema.Union([Schema.String, Schema.Finite]))),
  meets_cutoffs: Schema.optionalKey(Schema.Boolean),
  recent_failure: Schema.optionalKey(Schema.Boolean),
  missing_parameters: Schema.optionalKey(Schema.Array(Schema.String))
})

/**
 * Why the plan is what it is (see `RoutePlan.Explanation`).
 *
 * @since 0.1.0
 */
const Explanation = Schema.Struct({
  model: Schema.String,
  mode: Schema.Literals(["order", "sort", "default"]),
  seed: Schema.Int,
  allow_fallbacks: Schema.Boolean,
  order: Schema.NullOr(Schema.Array(Schema.String)),
  sort: Schema.NullOr(Schema.Struct({ by: Schema.String, partition: Schema.String })),
  draw: Schema.optionalKey(Schema.Struct({ u: Schema.Finite, pool: Schema.Array(Schema.String) })),
  candidates: Schema.Array(CandidateReport)
})

/**
 * `POST /embeddings/plan`'s and `POST /rerank/plan`'s answer (`object` names which). The estimate
 * is the most the request can cost on the first endpoint, and its token bound.
 *
 * @since 0.1.0
 */
export const RoutePlanReport = Schema.Struct({
  object: Schema.Literals(["embeddings.plan", "rerank.plan"]),
  model: Schema.String,
  attempts: Schema.Array(Schema.String),
  explanation: Explanation,
  estimate: Schema.Struct({
    prompt_tokens: Schema.Int,
    cost: Schema.Finite
  })
})

/**
 * @since 0.1.0
 */
export type RoutePlanReport = typeof RoutePlanReport.Type
