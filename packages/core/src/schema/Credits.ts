/**
 * A workspace's credits on the wire: `GET /credits` in the official SDK's shape, and the
 * operator's `POST /credits` that adds to them.
 *
 * **Details**
 *
 * Credits are USD. `total_credits` is everything ever added to the workspace, `total_usage`
 * everything its non-BYOK requests were charged (the ledger's sum); the balance a request may
 * spend is their difference minus what open holds keep back.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * `GET /credits` and `POST /credits`.
 *
 * @since 0.1.0
 */
export const CreditsResponse = Schema.Struct({
  data: Schema.Struct({
    total_credits: Schema.Finite,
    total_usage: Schema.Finite
  })
})

/**
 * @since 0.1.0
 */
export type CreditsResponse = typeof CreditsResponse.Type

const Amount = Schema.Union([
  Schema.Finite,
  Schema.String.check(Schema.isPattern(/^(0|[1-9][0-9]{0,9})(\.[0-9]{1,9})?$/u, {
    message: "amount must be a decimal such as \"10\" or \"0.5\" with at most 9 fractional digits"
  }))
])

/**
 * `POST /credits`: adds `amount` credits (a JSON number or an exact decimal string, more than
 * 0 and at most 1,000,000,000) to a workspace; without `workspace_id`, to the calling key's.
 *
 * @since 0.1.0
 */
export const AddCreditsBody = Schema.Struct({
  amount: Amount,
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  note: Schema.optionalKey(Schema.String.check(Schema.isMaxCodePoints(500, { message: "note must be at most 500 characters" })))
})

/**
 * @since 0.1.0
 */
export type AddCreditsBody = typeof AddCreditsBody.Type

/**
 * The query of `GET /credits`: an optional `workspace_id` (default: the calling key's).
 *
 * @since 0.1.0
 */
export const CreditsQuery = {
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
}
