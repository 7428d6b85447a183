import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { spendTable } from "./SpendTable.ts"

/**
 * Workspaces as managed resources, their members, their budgets, and the spend counters that
 * enforce those budgets with the same hold-then-settle exactness as key limits.
 *
 * **Details**
 *
 * - `workspaces` gains the public API's settings, `updated_at` and soft deletion (a deleted
 *   workspace's ledger rows stay; its slug becomes free again).
 * - `memberships` gains an id and a creation time; the first-start role `owner` becomes `admin`.
 * - `workspace_budgets`: one limit per workspace and interval (`daily`, `weekly`, `monthly`,
 *   `lifetime`). `workspaces.include_byok_in_budgets` says whether BYOK spend counts.
 * - `workspace_spend`: per workspace and UTC day, the non-BYOK and BYOK nanos the ledger charged,
 *   plus a `-infinity` row of all-time totals, as `key_spend` does per key; backfilled here.
 * - `ledger.latency_ms`: how long the served request took, for `GET /generation`.
 *
 * The budgets are checked by `switchyard_budget_room` (in `MoneyFunctions.ts`).
 */
export const workspaceBudgets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE workspaces
    ADD COLUMN description text,
    ADD COLUMN created_by text,
    ADD COLUMN default_text_model text,
    ADD COLUMN default_image_model text,
    ADD COLUMN default_provider_sort text,
    ADD COLUMN include_byok_in_budgets boolean NOT NULL DEFAULT false,
    ADD COLUMN updated_at timestamptz,
    ADD COLUMN deleted_at timestamptz`
  yield* sql`ALTER TABLE workspaces DROP CONSTRAINT workspaces_slug_key`
  yield* sql`CREATE UNIQUE INDEX workspaces_live_slug ON workspaces (slug) WHERE deleted_at IS NULL`
  yield* sql`ALTER TABLE memberships
    ADD COLUMN id text NOT NULL DEFAULT gen_random_uuid()::text,
    ADD COLUMN created_at timestamptz NOT NULL DEFAULT now()`
  yield* sql`UPDATE memberships SET role = 'admin' WHERE role = 'owner'`
  yield* sql`CREATE INDEX memberships_workspace ON memberships (workspace_id, created_at)`
  yield* sql`CREATE TABLE workspace_budgets (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    interval text NOT NULL CHECK (interval IN ('daily', 'weekly', 'monthly', 'lifetime')),
    limit_nanos bigint NOT NULL CHECK (limit_nanos >= 0),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (workspace_id, interval)
  )`
  yield* spendTable({ table: "workspace_spend", owner: "workspace_id", ownerTable: "workspaces" })
  yield* sql`ALTER TABLE ledger ADD COLUMN latency_ms integer`
})
