/**
 * The money port on the SQL store, with spend leases: a request touches the store only in batches.
 *
 * **Details**
 *
 * - **Admission.** A key's facts (does it still work; which scopes limit it) come from memory
 *   (`MoneyFacts`). A request that no scope limits (no key limit, no budget, no prepaid credits:
 *   a fresh install) is admitted with no statement. Otherwise it is admitted from this process's
 *   lease on the key (`SpendLease`): one hold row the process owns, counted against every scope
 *   like any hold. When the lease has too little free, one statement (`switchyard_lease`) checks
 *   the scopes and grants a slice; concurrent requests on the same lease wait for that one
 *   statement rather than sending their own.
 * - **Settlement.** In memory against the lease; the ledger row goes to `LedgerBatch`, whose one
 *   statement writes the rows of many requests and moves the counters and lease amounts with them.
 *   `settle` succeeds once that statement committed.
 * - **Hand-back.** A lease unused for `idleReturn` (5 s) gives back what is free; a lease granted
 *   under facts that changed since (a limit, a budget, a switch) gives back what is free before it
 *   admits again; leases are kept alive (their expiry pushed back) while in use; closing the layer
 *   writes the waiting rows and then deletes this process's leases.
 * - **Crash.** A process killed keeps its leases' room from the others until the dead-process
 *   sweep (about 40 s on PostgreSQL; at the next start on PGlite) or their expiry (`leaseTtl`,
 *   10 min after their last use).
 * - **Fencing** (`FencedLease`). A lease is admitted from only while valid by this process's
 *   monotonic clock: 25 s from before the grant that last renewed it was asked (the store sweeps
 *   after 30 s unseen, and every grant says the process is alive). Leases in use are renewed ahead
 *   of that; a process resumed after a freeze renews (or finds its lease taken) before it admits.
 *   Each ledger row carries the lease's fencing token; a row whose lease was taken is not written,
 *   and its request is answered 503 and not charged.
 * - **Failures.** After a grant, hand-back or write that failed (it may have committed), the lease
 *   is read again from the store before it grants or admits again. A lease that could not be
 *   handed back stays in memory, marked to return, and is handed back once the store answers.
 */
import * as FencedLease from "@switchyard/core/accounting/FencedLease"
import * as SpendLease from "@switchyard/core/accounting/SpendLease"
import { Accounting, Refused } from "@switchyard/core/store/Accounting"
import type { AddCreditsRequest, CreditTotals, RecordRequest, RefusalReason, Reservation, ReserveRequest, SettleRequest, Settlement } from "@switchyard/core/store/Accounting"
import { fromSqlError, StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import { Clock, Config, Deferred, Duration, Effect, Layer, Option, Schedule, Schema, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as GatewayProcesses from "./GatewayProcesses.ts"
import * as LedgerBatch from "./LedgerBatch.ts"
import * as MoneyFacts from "./MoneyFacts.ts"
import * as PgliteDurability from "./PgliteDurability.ts"
import { InFlight } from "./InFlight.ts"
import { StoreChanges } from "./StoreChanges.ts"
import { StoreStatements } from "./StoreStatements.ts"
import * as Span from "../observability/Span.ts"

export interface AccountingOptions {
  /** How long a lease counts after its last use if its process never hands it back. */
  readonly leaseTtl?: Duration.Input
  /** A lease unused this long hands back what is free. */
  readonly idleReturn?: Duration.Input
  /** How long key facts are kept before they are read again. */
  readonly factsTtl?: Duration.Input
  /** The most ledger rows in one statement. */
  readonly maxRows?: number
  /** The longest a ledger write waits for the rows of requests still in flight. */
  readonly lingerMs?: number
  readonly policy?: SpendLease.Policy
  /** Heartbeat and stale time of the process registration. */
  readonly process?: GatewayProcesses.GatewayProcessOptions
  /** How long before the store may take a lease it stops being valid, and when it is renewed. */
  readonly fencing?: Partial<Pick<FencedLease.Term, "marginMs" | "renewAheadMs">>
  /** How long a failed ledger write's outcome is read back for while the store does not answer. */
  readonly resolveWithinMs?: number
}

export const defaultLeaseTtl = Duration.minutes(10)
export const defaultIdleReturn = Duration.seconds(5)
export const defaultFactsTtl = Duration.seconds(1)
export const defaultLingerMs = 10

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

interface LeaseEntry {
  readonly id: string
  readonly keyId: string
  readonly workspaceId: string
  readonly byok: boolean
  /** The lease, its fencing token and how long it is valid. */
  held: FencedLease.Held
  /** A statement on the lease failed and may have committed: read its row before granting or admitting. */
  reread: boolean
  /** The facts the lease was granted under. */
  signature: string
  demand: SpendLease.Demand
  lastUsedMs: number
  readonly lock: Semaphore.Semaphore
  /** The reservations admitted from it and not yet settled or released (worst case, facts, token), by reservation id. */
  readonly open: Map<string, { readonly worst: bigint; readonly signature: string; readonly fence: string }>
}

/** The lease a request was admitted under is gone: the request is answered 503 and not charged. */
const leaseTaken = () =>
  new StoreUnavailable({ operation: "accounting.lease_taken", cause: "the spend lease was taken by the store (swept or expired)" })

export const make = (options: AccountingOptions = {}) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statements = yield* StoreStatements
    const changes = yield* StoreChanges
    const inFlight = yield* InFlight
    const owner = yield* GatewayProcesses.register(options.process)
    const leaseTtl = Duration.fromInputUnsafe(options.leaseTtl ?? defaultLeaseTtl)
    const idleReturnMs = Duration.toMillis(Duration.fromInputUnsafe(options.idleReturn ?? defaultIdleReturn))
    const policy = options.policy ?? SpendLease.defaultPolicy
    const facts = yield* MoneyFacts.make(sql, options.factsTtl ?? defaultFactsTtl)
    yield* changes.listen((change) => (change._tag === "Key" ? facts.forget(change.keyId) : facts.forgetAll))
    // Rows waiting for the next batch; the requests in flight beyond them will write theirs soon.
    let waitingRows = 0
    const batch = yield* LedgerBatch.make(sql, statements, {
      maxRows: options.maxRows ?? 256,
      lingerMs: options.lingerMs ?? defaultLingerMs,
      busy: () => inFlight.count() > waitingRows,
      leaseTtl,
      ...(options.resolveWithinMs === undefined ? {} : { resolveWithinMs: options.resolveWithinMs })
    })
    /** Writes a row with the next batch, counted as waiting until that batch ended. */
    const write = (row: LedgerBatch.LedgerRow, after: LedgerBatch.After) =>
      Effect.suspend(() => {
        waitingRows++
        return batch.write(row, (written, uncertain) => {
          waitingRows--
          after(written, uncertain)
        })
      })
    const term: FencedLease.Term = {
      ...FencedLease.defaultTerm,
      ...options.fencing,
      sweepAfterMs: Duration.toMillis(Duration.fromInputUnsafe(options.process?.staleAfter ?? GatewayProcesses.defaultStaleAfter)),
      ttlMs: Duration.toMillis(leaseTtl)
    }

    const leases = new Map<string, LeaseEntry>()
    const byId = new Map<string, LeaseEntry>()
    /** Idle leases on their way back to the store: kept (and tried again) until a hand-back succeeds. */
    const returning = new Set<LeaseEntry>()
    let liveProcesses = 1
    // Settlements under way in this process, by generation id: a second settle waits for the first,
    // on a deferred made only then (ids are fresh, so almost every settlement is alone: `null`).
    const settling = new Map<string, Deferred.Deferred<Settlement, StoreUnavailable> | null>()

    const noDiskWait = <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.provideService(self, PgliteDurability.NoDiskWait, true)

    const expiresAt = (nowMs: number) => new Date(nowMs + Duration.toMillis(leaseTtl))

    /**
     * The facts a lease is granted under, and the window it counts in: a slice of one day's room is
     * never spent on another day's requests (a key limit or budget that resets: the UTC day).
     */
    const windowed = (f: MoneyFacts.MoneyFacts, nowMs: number) =>
      f.limitReset !== null || (f.budgets !== null && /(daily|weekly|monthly)=/u.test(f.budgets))
        ? `${f.signature}|${new Date(nowMs).toISOString().slice(0, 10)}`
        : f.signature

    const keyRefusal = (f: MoneyFacts.MoneyFacts, workspaceId: string, nowMs: number, required: bigint): Refused | "wrong_workspace" | undefined => {
      if (f.deleted) return new Refused({ reason: "key_deleted", requiredNanos: required })
      if (f.disabled) return new Refused({ reason: "key_disabled", requiredNanos: required })
      if (f.expiresAtMs !== null && f.expiresAtMs <= nowMs) return new Refused({ reason: "key_expired", requiredNanos: required })
      if (f.workspaceId !== workspaceId) return "wrong_workspace"
      return undefined
    }

    /** The key's facts, refused when the key stopped working. */
    const checkedFacts = (keyId: string, workspaceId: string, required: bigint) =>
      Effect.gen(function*() {
        const found = yield* facts.of(keyId)
        const nowMs = yield* Clock.currentTimeMillis
        if (Option.isNone(found)) return yield* Effect.fail(new Refused({ reason: "key_deleted", requiredNanos: required }))
        const refusal = keyRefusal(found.value, workspaceId, nowMs, required)
        if (refusal === "wrong_workspace") return yield* Effect.die(new Error(`accounting: key ${keyId} is not in workspace ${workspaceId}`))
        if (refusal !== undefined) return yield* Effect.fail(refusal)
        return { facts: found.value, nowMs }
      })

    const leaseFor = (keyId: string, workspaceId: string, byok: boolean, signature: string, nowMs: number): LeaseEntry => {
      const name = `${keyId}|${byok}`
      const existing = leases.get(name)
      if (existing !== undefined) return existing
      const entry: LeaseEntry = {
        id: `lease-${Crypto.randomUUID()}`,
        keyId,
        workspaceId,
        byok,
        held: FencedLease.empty,
        reread: false,
        signature,
        demand: SpendLease.noDemand(nowMs),
        lastUsedMs: nowMs,
        lock: Semaphore.makeUnsafe(1),
        open: new Map()
      }
      leases.set(name, entry)
      byId.set(entry.id, entry)
      return entry
    }

    /** A statement on the lease failed and may have committed: the lease is read again before it is used. */
    const markUncertain = (entry: LeaseEntry) => {
      entry.reread = true
      entry.held = { ...entry.held, validUntilNanos: 0n }
    }

    /** Reads the lease's row as the last write left it (no write under way), when a failure left it uncertain. */
    const reread = (entry: LeaseEntry) =>
      Effect.suspend(() => {
        if (!entry.reread) return Effect.void
        return batch.exclusive(Effect.gen(function*() {
          const rows = yield* sql`SELECT amount_nanos::text AS amount, fence::text AS fence FROM holds WHERE id = ${entry.id}`.pipe(
            noDiskWait,
            fromSqlError("accounting.lease_read"),
            Effect.flatMap((out) => decodeStoredLease(out).pipe(Effect.orDie)) // the query's own shape: a mismatch is a bug
          )
          const row = rows[0]
          entry.held = FencedLease.reread(entry.held, row === undefined ? undefined : { amount: BigInt(row.amount), fence: row.fence })
          entry.reread = false
        }))
      })

    /** Runs `effect` holding the lease's lock, once the lease is known as the store has it. */
    const locked = <A, E, R>(entry: LeaseEntry, effect: Effect.Effect<A, E, R>) =>
      entry.lock.withPermits(1)(Effect.andThen(reread(entry), effect))

    /** Gives back what is free of a lease (one statement, only when something is free); whether it went back. */
    const handBack = (entry: LeaseEntry) =>
      Effect.suspend(() => {
        const { lease, returned } = SpendLease.handBack(entry.held.lease)
        if (returned === 0n) return Effect.succeed(true)
        entry.held = { ...entry.held, lease }
        return sql`SELECT switchyard_lease_return(${entry.id}, ${returned.toString()}::bigint)`.pipe(
          noDiskWait,
          fromSqlError("accounting.lease_return"),
          Effect.as(true),
          // Not handed back (or not known to be): the row is read again before the lease is used.
          Effect.catchTag("StoreUnavailable", (e) =>
            Effect.sync(() => markUncertain(entry)).pipe(
              Effect.andThen(Effect.logWarning("accounting: could not hand back a lease", e.cause)),
              Effect.as(false)
            ))
        )
      })

    /** Ends an unused lease: its row goes from the store; whether it went. */
    const returnAll = (entry: LeaseEntry) =>
      Effect.suspend(() => {
        const fence = entry.held.fence
        if (fence === null) return Effect.succeed(true)
        return sql`DELETE FROM holds WHERE id = ${entry.id} AND fence = ${fence}::bigint`.pipe(
          noDiskWait,
          fromSqlError("accounting.lease_return"),
          Effect.as(true),
          Effect.catchTag("StoreUnavailable", (e) => Effect.as(Effect.logWarning("accounting: could not hand back a lease", e.cause), false))
        )
      })

    /** Asks the store to grant the lease more; the refusal (for a request of `worst`), or nothing. */
    const grant = (entry: LeaseEntry, request: SpendLease.Ask, worst: bigint, nowMs: number) =>
      Effect.gen(function*() {
        // Measured before the statement: the store cannot take the lease sooner than a stale time after this.
        const askedAt = yield* Clock.monotonicTimeNanos
        const rows = yield* sql`SELECT * FROM switchyard_lease(${entry.id}, ${owner}, ${entry.keyId}, ${entry.workspaceId},
            ${entry.byok}, ${request.need.toString()}::bigint, ${request.desired.toString()}::bigint, ${request.unit.toString()}::bigint,
            ${request.edge.toString()}::bigint, ${request.divisor.toString()}::bigint, ${new Date(nowMs)}, ${expiresAt(nowMs)})`.pipe(
          noDiskWait,
          fromSqlError("accounting.lease"),
          Effect.tapError(() => Effect.sync(() => markUncertain(entry))),
          Effect.flatMap((out) => decodeLease(out).pipe(Effect.orDie)) // the function's own shape: a mismatch is a bug
        )
        const row = rows[0]!
        if (row.o_outcome === "ok") {
          entry.held = FencedLease.granted(entry.held, { amount: BigInt(row.o_granted!), fence: row.o_fence }, askedAt, term)
          return undefined
        }
        if (row.o_outcome === "wrong_workspace") {
          return yield* Effect.die(new Error(`accounting: key ${entry.keyId} is not in workspace ${entry.workspaceId}`))
        }
        // What the refusing scope has left, as this process sees it: the store's room plus what its lease has free.
        const remaining = row.o_room === null ? undefined : BigInt(row.o_room) + SpendLease.free(entry.held.lease)
        return new Refused({
          reason: row.o_outcome satisfies RefusalReason,
          requiredNanos: worst,
          limitNanos: row.o_limit === null ? undefined : BigInt(row.o_limit),
          remainingNanos: remaining,
          window: row.o_reset
        })
      })

    /** Under the lease's lock: hands back what was granted under other facts before the lease serves new ones. */
    const adopt = (entry: LeaseEntry, signature: string) =>
      Effect.gen(function*() {
        if (entry.signature === signature) return
        if (!(yield* handBack(entry))) return yield* Effect.fail(new StoreUnavailable({ operation: "accounting.lease_return", cause: "hand-back failed" }))
        entry.signature = signature
      })

    /**
     * Admits `worst` from the key's lease while it is valid, asking the store when it is not or
     * when `worst` does not fit; the lease's fencing token it was admitted under.
     */
    const admitFrom = (entry: LeaseEntry, worst: bigint, signature: string, nowMs: number) =>
      Effect.gen(function*() {
        entry.lastUsedMs = nowMs
        entry.demand = SpendLease.observe(entry.demand, worst, nowMs)
        const fast = entry.signature === signature && !entry.reread
          ? FencedLease.admit(entry.held, worst, yield* Clock.monotonicTimeNanos)
          : undefined
        if (fast !== undefined) {
          entry.held = fast
          return fast.fence!
        }
        return yield* locked(entry, Effect.gen(function*() {
          yield* adopt(entry, signature)
          // Read before the grants: each renews validity from a later moment. Two asks at most: a
          // grant that finds the lease taken holds only what it granted afresh.
          const now = yield* Clock.monotonicTimeNanos
          for (let asks = 0;; asks++) {
            // Right after the grant, with no yield between: no other request takes what it granted.
            const admitted = FencedLease.admit(entry.held, worst, now)
            if (admitted !== undefined) {
              entry.held = admitted
              return admitted.fence!
            }
            if (asks === 2) return yield* Effect.fail(leaseTaken())
            const asked = SpendLease.ask({ lease: entry.held.lease, worst, demandPerSecond: entry.demand.perSecond, liveProcesses, policy })
            const refused = yield* grant(entry, asked, worst, nowMs)
            if (refused !== undefined) return yield* Effect.fail(refused)
          }
        }))
      })

    const reserve = Effect.fnUntraced(function*(request: ReserveRequest) {
      if (request.amountNanos < 0n) return yield* Effect.die(new RangeError("reserve: negative amount"))
      const { facts: f, nowMs } = yield* checkedFacts(request.keyId, request.workspaceId, request.amountNanos)
      const base = {
        id: Crypto.randomUUID(),
        keyId: request.keyId,
        workspaceId: request.workspaceId,
        amountNanos: request.amountNanos,
        byok: request.byok
      }
      if (request.amountNanos === 0n || !MoneyFacts.limited(f, request.byok)) return { ...base, lease: null } satisfies Reservation
      const signature = windowed(f, nowMs)
      const entry = leaseFor(request.keyId, request.workspaceId, request.byok, signature, nowMs)
      const fence = yield* admitFrom(entry, request.amountNanos, signature, nowMs)
      entry.open.set(base.id, { worst: request.amountNanos, signature, fence })
      return { ...base, lease: entry.id } satisfies Reservation
    })

    const ledgerRow = (
      keyId: string,
      workspaceId: string,
      request: Omit<SettleRequest, "costNanos">,
      cost: bigint,
      lease: { readonly id: string; readonly fence: string | null } | null,
      nowMs: number
    ): LedgerBatch.LedgerRow => ({
      generation: request.generationId,
      key: keyId,
      workspace: workspaceId,
      model: request.model,
      provider: request.provider,
      prompt_tokens: request.promptTokens,
      total_tokens: request.totalTokens,
      cost: cost.toString(),
      byok: request.isByok,
      created: new Date(nowMs).toISOString(),
      latency_ms: request.latencyMs === undefined ? null : Math.max(0, Math.round(request.latencyMs)),
      cached_items: request.cachedItems ?? 0,
      cached_tokens: request.cachedTokens ?? 0,
      attempts: request.attempts === undefined ? null : AttemptRecord.encode(request.attempts),
      lease: lease?.id ?? null,
      fence: lease?.fence ?? null
    })

    /** Runs a settlement once per generation id in this process; a second call waits for the first. */
    const once = (generationId: string, run: Effect.Effect<Settlement, StoreUnavailable>) =>
      Effect.suspend(() => {
        let earlier = settling.get(generationId)
        if (earlier !== undefined) {
          if (earlier === null) {
            earlier = Deferred.makeUnsafe<Settlement, StoreUnavailable>()
            settling.set(generationId, earlier)
          }
          return Effect.map(Deferred.await(earlier), (s): Settlement => ({ ...s, capped: false, duplicate: true }))
        }
        settling.set(generationId, null)
        return run.pipe(
          Effect.onExit((exit) =>
            Effect.sync(() => {
              const waiting = settling.get(generationId)
              settling.delete(generationId)
              if (waiting != null) Deferred.doneUnsafe(waiting, exit)
            })
          )
        )
      })

    const settle = (reservation: Reservation, request: SettleRequest) =>
      once(
        request.generationId,
        Effect.gen(function*() {
          if (request.costNanos < 0n) return yield* Effect.die(new RangeError("settle: negative cost"))
          const nowMs = yield* Clock.currentTimeMillis
          const entry = reservation.lease === null ? undefined : byId.get(reservation.lease)
          let charged = request.costNanos
          let fence: string | null = null
          if (entry !== undefined) {
            const open = entry.open.get(reservation.id)
            entry.open.delete(reservation.id)
            // Admitted under a lease the store has taken since: no row, no charge.
            if (open !== undefined && open.fence !== entry.held.fence) return yield* Effect.fail(leaseTaken())
            fence = entry.held.fence
            if (open === undefined) {
              // Settled or released before: it holds nothing any more, and may take only what is free.
              const settled = SpendLease.settle(entry.held.lease, 0n, request.costNanos)
              entry.held = { ...entry.held, lease: settled.lease }
              charged = settled.charged
            } else if (open.signature === entry.signature) {
              // A cost above the worst case takes what the lease has free, then what the store still allows.
              const beyond = request.costNanos - open.worst - SpendLease.free(entry.held.lease)
              if (beyond > 0n) {
                yield* locked(entry, grant(entry, SpendLease.upTo(beyond), open.worst, nowMs)).pipe(
                  Effect.catchTag("StoreUnavailable", () => Effect.void)
                )
                if (open.fence !== entry.held.fence) return yield* Effect.fail(leaseTaken())
              }
              const settled = SpendLease.settle(entry.held.lease, open.worst, request.costNanos)
              entry.held = { ...entry.held, lease: settled.lease }
              charged = settled.charged
            } else {
              // The lease has moved on to another window (or other facts) since the request was
              // admitted: what is free now is not that window's, so the request takes its own worst case at most.
              charged = request.costNanos < open.worst ? request.costNanos : open.worst
              const lease = entry.held.lease
              entry.held = { ...entry.held, lease: { ...lease, reserved: lease.reserved - open.worst, pending: lease.pending + charged } }
            }
            entry.lastUsedMs = nowMs
          }
          const written = yield* write(
            ledgerRow(reservation.keyId, reservation.workspaceId, request, charged, entry === undefined ? null : { id: entry.id, fence }, nowMs),
            (written, uncertain) => {
              // A lease taken meanwhile holds nothing of this row any more.
              if (entry === undefined || entry.held.fence !== fence) return
              entry.held = { ...entry.held, lease: SpendLease.flushed(entry.held.lease, charged, written?.written === true) }
              if (uncertain) markUncertain(entry)
            }
          )
          return {
            generationId: request.generationId,
            costNanos: written.costNanos,
            capped: written.written && charged < request.costNanos,
            duplicate: !written.written
          } satisfies Settlement
        })
      )

    const record = (request: RecordRequest) =>
      Effect.gen(function*() {
        const { facts: f, nowMs } = yield* checkedFacts(request.keyId, request.workspaceId, 0n)
        if (MoneyFacts.limited(f, request.isByok)) {
          // The checks of a reservation at amount 0: a scope already spent beyond its limit refuses.
          const signature = windowed(f, nowMs)
          const entry = leaseFor(request.keyId, request.workspaceId, request.isByok, signature, nowMs)
          if (entry.signature !== signature || !SpendLease.inUse(entry.held.lease) && entry.held.lease.amount === 0n) {
            const refused = yield* locked(entry, Effect.gen(function*() {
              yield* adopt(entry, signature)
              return yield* grant(entry, SpendLease.upTo(0n), 0n, nowMs)
            }))
            if (refused !== undefined) return yield* Effect.fail(refused)
          }
        }
        const written = yield* write(ledgerRow(request.keyId, request.workspaceId, request, 0n, null, nowMs), () => {})
        return { generationId: request.generationId, costNanos: 0n, capped: false, duplicate: !written.written } satisfies Settlement
      })

    const release = (reservation: Reservation) =>
      Effect.sync(() => {
        const entry = reservation.lease === null ? undefined : byId.get(reservation.lease)
        const open = entry?.open.get(reservation.id)
        if (entry === undefined || open === undefined) return
        entry.open.delete(reservation.id)
        // A lease taken since holds nothing of it any more.
        if (open.fence === entry.held.fence) entry.held = { ...entry.held, lease: SpendLease.release(entry.held.lease, open.worst) }
      })

    const credits = (workspaceId: string) =>
      Effect.gen(function*() {
        const now = new Date(yield* Clock.currentTimeMillis)
        const rows = yield* sql`SELECT
            COALESCE((SELECT credits_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0)::text AS credits,
            COALESCE((SELECT usage_nanos FROM credit_accounts WHERE workspace_id = ${workspaceId}), 0)::text AS usage,
            (SELECT COALESCE(SUM(amount_nanos), 0) FROM holds
              WHERE workspace_id = ${workspaceId} AND expires_at > ${now} AND NOT is_byok)::text AS held`.pipe(
          fromSqlError("credits.read"),
          Effect.flatMap((out) => decodeCredits(out).pipe(Effect.orDie)) // the query's own shape: a mismatch is a bug
        )
        const row = rows[0]!
        return {
          workspaceId,
          totalCreditsNanos: BigInt(row.credits),
          totalUsageNanos: BigInt(row.usage),
          heldNanos: BigInt(row.held)
        } satisfies CreditTotals
      })

    const addCredits = (request: AddCreditsRequest) =>
      Effect.gen(function*() {
        if (request.amountNanos <= 0n) return yield* Effect.die(new RangeError("addCredits: amount must be positive"))
        const now = new Date(yield* Clock.currentTimeMillis)
        yield* sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO credit_grants (id, workspace_id, amount_nanos, note, granted_by_key_id, created_at)
            VALUES (${Crypto.randomUUID()}, ${request.workspaceId}, ${request.amountNanos.toString()}::bigint, ${request.note},
              ${request.grantedByKeyId}, ${now})`
          // A grant turns the workspace's prepaid credits on (migration `0006_prepaid_credits`).
          yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, updated_at, prepaid)
            VALUES (${request.workspaceId}, ${request.amountNanos.toString()}::bigint, ${now}, true)
            ON CONFLICT (workspace_id) DO UPDATE
              SET credits_nanos = credit_accounts.credits_nanos + EXCLUDED.credits_nanos, updated_at = EXCLUDED.updated_at,
                prepaid = true`
        })).pipe(fromSqlError("credits.add"))
        yield* changes.changed({ _tag: "Workspace", workspaceId: request.workspaceId })
        return yield* credits(request.workspaceId)
      })

    /** Renews a lease in use before its validity runs out, so that admissions need not wait for it. */
    const renew = (entry: LeaseEntry, nowMs: number) =>
      // A refusal leaves the lease to expire by its clock; the next admission asks (and is refused) itself.
      locked(entry, grant(entry, SpendLease.upTo(0n), 0n, nowMs)).pipe(
        Effect.asVoid,
        Effect.catchTag("StoreUnavailable", (e) => Effect.logDebug("accounting: could not renew a lease", e.cause))
      )

    // Upkeep every second: idle leases hand back what is free (and those not handed back yet are
    // tried again), leases in use are renewed ahead of their validity's end, and every ten seconds
    // on PostgreSQL the number of live processes (which sizes slices) is read again.
    let ticks = 0
    const upkeep = Effect.gen(function*() {
      const nowMs = yield* Clock.currentTimeMillis
      const nowNanos = yield* Clock.monotonicTimeNanos
      for (const [name, entry] of leases) {
        if (SpendLease.isIdle(entry.held.lease, entry.lastUsedMs, nowMs, idleReturnMs)) {
          // Nothing counts on it: the whole lease goes back, and its row with it.
          leases.delete(name)
          returning.add(entry)
        } else if (entry.reread || FencedLease.renewDue(entry.held, nowNanos, term)) {
          yield* renew(entry, nowMs)
        }
      }
      for (const entry of returning) {
        const returned = yield* locked(entry, returnAll(entry)).pipe(Effect.catchTag("StoreUnavailable", () => Effect.succeed(false)))
        if (returned) {
          returning.delete(entry)
          byId.delete(entry.id)
        }
      }
      ticks++
      if (sql.driver !== "pglite" && ticks % 10 === 0) {
        const live = yield* sql<{ n: number }>`SELECT count(*)::int AS n FROM gateway_processes
          WHERE seen_at >= now() - interval '30 seconds'`.pipe(fromSqlError("accounting.processes"))
        liveProcesses = Math.max(1, live[0]?.n ?? 1)
      }
    })
    yield* upkeep.pipe(
      Effect.catchCause((cause) => Effect.logWarning("accounting: lease upkeep failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(Math.min(1000, Math.max(10, idleReturnMs / 2))))),
      Effect.forkScoped
    )

    return Accounting.of({
      reserve: (request) => reserve(request).pipe(Span.within("Accounting.reserve")),
      settle: (reservation, request) => settle(reservation, request).pipe(Span.within("Accounting.settle")),
      record: (request) => record(request).pipe(Span.within("Accounting.record")),
      release,
      credits,
      addCredits
    })
  })

/**
 * The money port on the SQL store, with its process registration (`GatewayProcesses`), key facts
 * and leases in memory, and ledger rows in batches.
 */
export const layerWith = (options: AccountingOptions) => Layer.effect(Accounting, make(options))

/**
 * `SWITCHYARD_LEASE_IDLE_MS`: how long an unused lease keeps its slice before it hands it back
 * (default 5000).
 */
export const layer = Layer.unwrap(
  Effect.map(
    Config.Int("SWITCHYARD_LEASE_IDLE_MS").pipe(Config.withDefault(Duration.toMillis(defaultIdleReturn))),
    (idleMs) => layerWith({ idleReturn: Duration.millis(Math.max(1, idleMs)) })
  )
)
