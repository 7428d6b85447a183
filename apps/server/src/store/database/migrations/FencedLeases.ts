import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Fenced spend leases: a lease row carries a fencing token, and a ledger row settled against a
 * lease is written only while the lease row still has the token it was admitted under.
 *
 * **Details**
 *
 * - `holds.fence`: a token from the `holds_fence` sequence, new whenever a hold row is created
 *   (a lease swept and granted again is a new row with a new token); grants that add to a row
 *   keep it.
 * - `switchyard_lease` answers the token and `switchyard_flush` checks it: their definitions (new
 *   signatures) are in `MoneyFunctions.ts`, created once the migrations have run.
 */
export const fencedLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SEQUENCE holds_fence`
  yield* sql`ALTER TABLE holds ADD COLUMN fence bigint NOT NULL DEFAULT nextval('holds_fence')`
})
