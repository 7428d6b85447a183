import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { accountingBatch } from "./migrations/AccountingBatch.ts"
import { cachedTokens } from "./migrations/CachedTokens.ts"
import { currentMoneyFunctions } from "./migrations/CurrentMoneyFunctions.ts"
import { fencedLeases } from "./migrations/FencedLeases.ts"
import { generationAttempts } from "./migrations/GenerationAttempts.ts"
import { interns } from "./migrations/Interns.ts"
import { ledgerRetention } from "./migrations/LedgerRetention.ts"
import { money } from "./migrations/Money.ts"
import * as MoneyFunctions from "./MoneyFunctions.ts"
import { prepaidCredits } from "./migrations/PrepaidCredits.ts"
import { spendCounters } from "./migrations/SpendCounters.ts"
import { spendLeases } from "./migrations/SpendLeases.ts"
import { workspaceBudgets } from "./migrations/WorkspaceBudgets.ts"
import { workspaceCache } from "./migrations/WorkspaceCache.ts"

const foundation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE workspaces (
    id text PRIMARY KEY,
    slug text NOT NULL UNIQUE,
    name text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE users (
    id text PRIMARY KEY,
    name text NOT NULL,
    default_workspace_id text NOT NULL REFERENCES workspaces(id),
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE TABLE memberships (
    user_id text NOT NULL REFERENCES users(id),
    workspace_id text NOT NULL REFERENCES workspaces(id),
    role text NOT NULL,
    PRIMARY KEY (user_id, workspace_id)
  )`
  yield* sql`CREATE TABLE api_keys (
    id text PRIMARY KEY,
    seq bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    hash text NOT NULL UNIQUE,
    kind text NOT NULL CHECK (kind IN ('standard', 'management')),
    name text NOT NULL,
    label text NOT NULL,
    user_id text NOT NULL REFERENCES users(id),
    workspace_id text NOT NULL REFERENCES workspaces(id),
    disabled boolean NOT NULL DEFAULT false,
    limit_nanos bigint,
    limit_reset text CHECK (limit_reset IN ('daily', 'weekly', 'monthly')),
    include_byok_in_limit boolean NOT NULL DEFAULT false,
    expires_at timestamptz,
    external_user text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz
  )`
  yield* sql`CREATE INDEX api_keys_owner ON api_keys (user_id, workspace_id, seq)`
  yield* sql`CREATE TABLE ledger (
    generation_id text PRIMARY KEY,
    key_id text NOT NULL REFERENCES api_keys(id),
    workspace_id text NOT NULL REFERENCES workspaces(id),
    model text NOT NULL,
    provider text NOT NULL,
    prompt_tokens integer NOT NULL,
    total_tokens integer NOT NULL,
    cost_nanos bigint NOT NULL CHECK (cost_nanos >= 0),
    is_byok boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX ledger_key_time ON ledger (key_id, created_at)`
})

/**
 * Every migration, in order. One set of PostgreSQL SQL serves both PGlite and PostgreSQL.
 */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_foundation": foundation,
  "0002_money": money,
  "0003_interns": interns,
  "0004_spend_counters": spendCounters,
  "0005_accounting_batch": accountingBatch,
  "0006_prepaid_credits": prepaidCredits,
  "0007_workspace_budgets": workspaceBudgets,
  "0008_cached_tokens": cachedTokens,
  "0009_workspace_cache": workspaceCache,
  "0010_spend_leases": spendLeases,
  "0011_money_functions": currentMoneyFunctions,
  "0012_ledger_retention": ledgerRetention,
  "0013_fenced_leases": fencedLeases,
  "0014_generation_attempts": generationAttempts
}

const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "switchyard_migrations" })

/**
 * Runs the migrations not run yet. When any ran, the money functions are created again from their
 * current definitions (`MoneyFunctions.replace`: a migration changes the tables, the functions are
 * defined in one place and follow the version that migrated), and the planner's statistics of
 * every table are gathered (a backfill or a new index changes them, and PL/pgSQL keeps the plans it
 * makes first). After that, PostgreSQL's autovacuum keeps them, and on PGlite `StoreUpkeep`.
 */
export const migrate = Effect.gen(function*() {
  const applied = yield* run
  if (applied.length === 0) return
  const sql = yield* SqlClient.SqlClient
  yield* sql.withTransaction(MoneyFunctions.replace)
  yield* sql`ANALYZE`
})
