import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { accountingBatch } from "./migrations/AccountingBatch.ts"
import { auditLog } from "./migrations/AuditLog.ts"
import { batchCost } from "./migrations/BatchCost.ts"
import { batchValidator } from "./migrations/BatchValidator.ts"
import { batches } from "./migrations/Batches.ts"
import { cachedTokens } from "./migrations/CachedTokens.ts"
import { currentMoneyFunctions } from "./migrations/CurrentMoneyFunctions.ts"
import { fencedLeases } from "./migrations/FencedLeases.ts"
import { forwardLiveness } from "./migrations/ForwardLiveness.ts"
import { generationAttempts } from "./migrations/GenerationAttempts.ts"
import { interns } from "./migrations/Interns.ts"
import { apiKeysColumns, ledgerColumns } from "./migrations/SharedColumns.ts"
import { managedProviders } from "./migrations/ManagedProviders.ts"
import { managementKeyScope } from "./migrations/ManagementKeyScope.ts"
import { ledgerRetention } from "./migrations/LedgerRetention.ts"
import { money } from "./migrations/Money.ts"
import { movedRowSettlement } from "./migrations/MovedRowSettlement.ts"
import * as MoneyFunctions from "../money/MoneyFunctions.ts"
import { prepaidCredits } from "./migrations/PrepaidCredits.ts"
import { providerBatchJobs } from "./migrations/ProviderBatchJobs.ts"
import { providerBatches } from "./migrations/ProviderBatches.ts"
import { auditAppendOnly } from "./migrations/AuditAppendOnly.ts"
import { auditPerson } from "./migrations/AuditPerson.ts"
import { sessions } from "./migrations/Sessions.ts"
import { sqliteBaseline } from "./migrations/SqliteBaseline.ts"
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
    ${sql.literal(apiKeysColumns)},
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
    ${sql.literal(ledgerColumns)},
    cost_nanos bigint NOT NULL CHECK (cost_nanos >= 0),
    is_byok boolean NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
  )`
  yield* sql`CREATE INDEX ledger_key_time ON ledger (key_id, created_at)`
})

type Migration = Effect.Effect<void, unknown, SqlClient.SqlClient>

/** On PostgreSQL the given step; on SQLite nothing (the baseline already has its result). */
const postgresOnly = (step: Migration): Migration =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.onDialectOrElse({ pg: () => step, orElse: () => Effect.void })
  })

/**
 * Every migration, in order, one record for both stores. PostgreSQL keeps its history: 0001–0013
 * as they ran. A SQLite store starts from `SqliteBaseline` (the final shape of everything
 * 0001–0013 build) as its 0001, and 0002–0013 do nothing there. From 0014 on, a migration is
 * written once in the SQL both dialects accept (or with its differences side by side in
 * `sql.onDialectOrElse`) and runs on both.
 */
export const migrations: Record<string, Migration> = {
  "0001_foundation": Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.onDialectOrElse({ sqlite: () => sqliteBaseline, orElse: () => foundation })
  }),
  "0002_money": postgresOnly(money),
  "0003_interns": postgresOnly(interns),
  "0004_spend_counters": postgresOnly(spendCounters),
  "0005_accounting_batch": postgresOnly(accountingBatch),
  "0006_prepaid_credits": postgresOnly(prepaidCredits),
  "0007_workspace_budgets": postgresOnly(workspaceBudgets),
  "0008_cached_tokens": postgresOnly(cachedTokens),
  "0009_workspace_cache": postgresOnly(workspaceCache),
  "0010_spend_leases": postgresOnly(spendLeases),
  "0011_money_functions": postgresOnly(currentMoneyFunctions),
  "0012_ledger_retention": postgresOnly(ledgerRetention),
  "0013_fenced_leases": postgresOnly(fencedLeases),
  "0014_generation_attempts": generationAttempts,
  "0015_providers": managedProviders,
  "0016_audit_log": auditLog,
  "0017_batches": batches,
  "0018_batch_cost": batchCost,
  "0019_provider_batches": providerBatches,
  "0020_forward_liveness": forwardLiveness,
  "0021_moved_row_settlement": movedRowSettlement,
  "0022_audit_append_only": auditAppendOnly,
  "0023_batch_validator": batchValidator,
  "0024_provider_batch_jobs": providerBatchJobs,
  "0025_management_key_scope": managementKeyScope,
  "0026_sessions": sessions,
  "0027_audit_person": auditPerson
}

const run = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: "switchyard_migrations" })

/**
 * Runs the migrations not run yet. When any ran: on PostgreSQL the money functions are created
 * again from their current definitions (`MoneyFunctions.replace`: a migration changes the tables,
 * the functions are defined in one place and follow the version that migrated); on both stores
 * the planner's statistics of every table are gathered (a backfill or a new index changes them).
 * After that, PostgreSQL's autovacuum keeps them, and on SQLite `StoreUpkeep`.
 */
export const migrate = Effect.gen(function*() {
  const applied = yield* run
  if (applied.length === 0) return
  const sql = yield* SqlClient.SqlClient
  yield* sql.onDialectOrElse({
    pg: () => sql.withTransaction(MoneyFunctions.replace),
    orElse: () => Effect.void
  })
  yield* sql`ANALYZE`
})
