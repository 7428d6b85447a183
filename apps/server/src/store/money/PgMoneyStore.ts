/**
 * The money store on PostgreSQL: each grant, hand-back and flush is one call of a PL/pgSQL function
 * (`MoneyFunctions`), one round trip that takes its locks in a fixed order, so replicas sharing
 * the database stay exact. Process liveness is dated by the database's clock, so replicas whose
 * clocks disagree still agree on who is stale.
 */
import { Duration, Effect, Schema } from "effect"
import type { SqlClient } from "effect/sql"
import type { CreditGrant, Flushed, GrantOutcome, GrantRequest, LedgerRow, MoneyStore } from "./MoneyStorePort.ts"

const LeaseRow = Schema.Struct({
  o_outcome: Schema.Literals(["ok", "key_deleted", "key_disabled", "key_expired", "wrong_workspace", "key_limit", "workspace_budget", "workspace_credits"]),
  o_granted: Schema.NullOr(Schema.String),
  o_limit: Schema.NullOr(Schema.String),
  o_reset: Schema.NullOr(Schema.String),
  o_room: Schema.NullOr(Schema.String),
  o_fence: Schema.NullOr(Schema.String)
})
const decodeLease = Schema.decodeUnknownEffect(Schema.Array(LeaseRow))

const StoredLease = Schema.Struct({ amount: Schema.String, fence: Schema.String })
const decodeStoredLease = Schema.decodeUnknownEffect(Schema.Array(StoredLease))

const CreditRow = Schema.Struct({ credits: Schema.String, usage: Schema.String, held: Schema.String })
const decodeCredits = Schema.decodeUnknownEffect(Schema.Array(CreditRow))

const FlushRow = Schema.Struct({
  o_generation: Schema.String,
  o_cost: Schema.NullOr(Schema.String),
  o_written: Schema.Boolean,
  o_fenced: Schema.Boolean
})
const decodeFlush = Schema.decodeUnknownEffect(Schema.Array(FlushRow))

const ReadBackRow = Schema.Struct({ generation_id: Schema.String, cost: Schema.String })
const decodeReadBack = Schema.decodeUnknownEffect(Schema.Array(ReadBackRow))

const bigOrNull = (text: string | null) => (text === null ? null : BigInt(text))

export const make = (sql: SqlClient.SqlClient): Effect.Effect<MoneyStore> =>
  Effect.sync(() => {
    const grant = (r: GrantRequest) =>
      sql`SELECT * FROM switchyard_lease(${r.id}, ${r.owner}, ${r.keyId}, ${r.workspaceId},
          ${r.byok}, ${r.ask.need.toString()}::bigint, ${r.ask.desired.toString()}::bigint, ${r.ask.unit.toString()}::bigint,
          ${r.ask.edge.toString()}::bigint, ${r.ask.divisor.toString()}::bigint, ${new Date(r.nowMs)}, ${new Date(r.expiresAtMs)})`.pipe(
        Effect.flatMap((out) => decodeLease(out).pipe(Effect.orDie)), // the function's own shape: a mismatch is a bug
        Effect.map((rows): GrantOutcome => {
          const row = rows[0]!
          return {
            outcome: row.o_outcome,
            granted: bigOrNull(row.o_granted),
            limit: bigOrNull(row.o_limit),
            reset: row.o_reset,
            room: bigOrNull(row.o_room),
            fence: row.o_fence
          }
        })
      )

    const handBack = (id: string, amount: bigint) =>
      sql`SELECT switchyard_lease_return(${id}, ${amount.toString()}::bigint)`.pipe(Effect.asVoid)

    const end = (id: string, fence: string) => sql`DELETE FROM holds WHERE id = ${id} AND fence = ${fence}::bigint`.pipe(Effect.asVoid)

    const readLease = (id: string) =>
      sql`SELECT amount_nanos::text AS amount, fence::text AS fence FROM holds WHERE id = ${id}`.pipe(
        Effect.flatMap((out) => decodeStoredLease(out).pipe(Effect.orDie)), // the query's own shape: a mismatch is a bug
        Effect.map((rows) => {
          const row = rows[0]
          return row === undefined ? undefined : { amount: BigInt(row.amount), fence: row.fence }
        })
      )

    const flush = (rows: ReadonlyArray<LedgerRow>, expiresAtMs: number) =>
      sql`SELECT o_generation, o_cost, o_written, o_fenced
          FROM switchyard_flush(${JSON.stringify(rows)}::jsonb, ${new Date(expiresAtMs)})`.pipe(
        Effect.flatMap((out) => decodeFlush(out).pipe(Effect.orDie)), // the function's own result type: a mismatch is a bug
        Effect.map((out) =>
          out.map((r): Flushed => ({ generation: r.o_generation, cost: bigOrNull(r.o_cost), written: r.o_written, fenced: r.o_fenced }))
        )
      )

    // Under the locks a flush takes (its keys): a flush still running in the store finishes first.
    const written = (rows: ReadonlyArray<LedgerRow>) =>
      sql.withTransaction(Effect.gen(function*() {
        const keys = [...new Set(rows.map((r) => r.key))].sort()
        yield* sql`SELECT 1 FROM api_keys WHERE id IN ${sql.in(keys)} ORDER BY id FOR NO KEY UPDATE`
        const found = yield* sql`SELECT generation_id, cost_nanos::text AS cost FROM ledger
          WHERE generation_id IN ${sql.in(rows.map((r) => r.generation))}`
        return new Map((yield* decodeReadBack(found).pipe(Effect.orDie)).map((r) => [r.generation_id, BigInt(r.cost)]))
      }))

    const credits = (workspaceId: string, nowMs: number) =>
      sql`SELECT
          COALESCE((SELECT credits_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0)::text AS credits,
          COALESCE((SELECT usage_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0)::text AS usage,
          (SELECT COALESCE(SUM(amount_nanos), 0) FROM holds
            WHERE workspace_id = ${workspaceId} AND expires_at > ${new Date(nowMs)} AND NOT is_byok)::text AS held`.pipe(
        Effect.flatMap((out) => decodeCredits(out).pipe(Effect.orDie)), // the query's own shape: a mismatch is a bug
        Effect.map((rows) => ({ credits: BigInt(rows[0]!.credits), usage: BigInt(rows[0]!.usage), held: BigInt(rows[0]!.held) }))
      )

    const addCredits = (g: CreditGrant) =>
      sql.withTransaction(Effect.gen(function*() {
        const now = new Date(g.nowMs)
        yield* sql`INSERT INTO credit_grants (id, workspace_id, amount_nanos, note, granted_by_key_id, created_at)
          VALUES (${g.id}, ${g.workspaceId}, ${g.amountNanos.toString()}::bigint, ${g.note}, ${g.grantedByKeyId}, ${now})`
        // A grant turns the workspace's prepaid credits on (migration `0006_prepaid_credits`).
        yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, updated_at, prepaid)
          VALUES (${g.workspaceId}, ${g.amountNanos.toString()}::bigint, ${now}, true)
          ON CONFLICT (workspace_id) DO UPDATE
            SET credits_nanos = credit_accounts.credits_nanos + EXCLUDED.credits_nanos, updated_at = EXCLUDED.updated_at,
              prepaid = true`
      }))

    const seconds = (d: Duration.Duration) => Duration.toMillis(d) / 1000

    const processes: MoneyStore["processes"] = {
      heartbeat: (id) =>
        sql`INSERT INTO gateway_processes (id, started_at, seen_at) VALUES (${id}, now(), now())
          ON CONFLICT (id) DO UPDATE SET seen_at = GREATEST(gateway_processes.seen_at, now())`.pipe(Effect.asVoid),
      // The rows go first: once a dead process's holds are gone, so is its row (the holds of an
      // owner without a row are swept all the same). One transaction, so both statements judge by
      // the same `now()`: a row still fresh for the first is not stale for the second. `SKIP
      // LOCKED`: a hold being settled right now is left to that settlement, and the sweep never
      // waits on a reservation's locks.
      sweep: (self, staleAfter) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`DELETE FROM gateway_processes
            WHERE id <> ${self} AND seen_at < now() - make_interval(secs => ${seconds(staleAfter)}::double precision)`
          const holds = yield* sql<{ id: string }>`DELETE FROM holds WHERE id IN (
              SELECT h.id FROM holds h
              WHERE h.owner IS NOT NULL AND h.owner <> ${self} AND NOT EXISTS (
                SELECT 1 FROM gateway_processes p
                WHERE p.id = h.owner AND p.seen_at >= now() - make_interval(secs => ${seconds(staleAfter)}::double precision))
              FOR UPDATE SKIP LOCKED)
            RETURNING id`
          return holds.length
        })),
      claim: (self) =>
        Effect.gen(function*() {
          yield* sql`DELETE FROM holds WHERE owner IS DISTINCT FROM ${self}`
          // Rows a lease grant left for a process that is gone (grants refresh their owner's row).
          yield* sql`DELETE FROM gateway_processes WHERE id <> ${self}`
        }),
      end: (self) =>
        Effect.all([
          sql`DELETE FROM holds WHERE owner = ${self}`,
          sql`DELETE FROM gateway_processes WHERE id = ${self}`
        ], { discard: true }),
      live: (staleAfter) =>
        sql<{ n: number }>`SELECT count(*)::int AS n FROM gateway_processes
          WHERE seen_at >= now() - make_interval(secs => ${seconds(staleAfter)}::double precision)`.pipe(
          Effect.map((rows) => Number(rows[0]?.n ?? 0))
        )
    }

    return { dialect: "pg", grant, handBack, end, readLease, flush, written, credits, addCredits, processes } satisfies MoneyStore
  })
