import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Prepaid workspace credits become opt-in.
 *
 * **Details**
 *
 * `credit_accounts.prepaid` says whether the workspace's balance (`credits_nanos - usage_nanos`)
 * stops spending. It is `false` for a new workspace, so a fresh install serves paid models with
 * no operator step, and the first credit grant (`POST /credits`) turns it on. Accounts that
 * already hold credits keep enforcing them.
 *
 * `switchyard_balance_room` answers the largest `bigint` for a workspace without prepaid credits
 * (its current definition: `MoneyFunctions.ts`).
 */
export const prepaidCredits = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE credit_accounts ADD COLUMN prepaid boolean NOT NULL DEFAULT false`
  yield* sql`UPDATE credit_accounts SET prepaid = true WHERE credits_nanos > 0`
})
