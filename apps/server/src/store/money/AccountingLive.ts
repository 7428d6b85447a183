/**
 * The money port (`Accounting`) wired from its parts: a request touches the store only in batches.
 *
 * **Details**
 *
 * - **Admission.** A key's facts (does it still work; which scopes limit it) come from memory
 *   (`MoneyFacts`). A request that no scope limits (no key limit, no budget, no prepaid credits:
 *   a fresh install) is admitted with no statement. Otherwise it is admitted from this process's
 *   lease on the key, kept by the lease book (`LeaseBook`): one hold row the process owns, counted
 *   against every scope like any hold, granted slices by the money store (`MoneyStore.grant`).
 * - **Settlement.** In memory against the lease (`LeaseBook.settle`); the ledger row goes to
 *   `LedgerBatch`, whose one flush (`MoneyStore.flush`, one transaction) writes the rows of many
 *   requests and moves the counters and lease amounts with them. `settle` succeeds once that
 *   flush committed. One settlement per generation id runs at a time in this process.
 * - **Hand-back, fencing, failures:** see `LeaseBook`. Closing the layer writes the waiting rows
 *   and then deletes this process's leases (`GatewayProcesses`).
 * - **Crash.** A process killed keeps its leases' room from the others until the dead-process
 *   sweep (about 40 s where several processes share the store; at the next start on the embedded
 *   store with one worker) or their expiry (`leaseTtl`, 10 min after their last use).
 * - **Stores.** The same on PostgreSQL and SQLite: only `MoneyStore` knows the dialect.
 */
import * as FencedLease from "@switchyard/core/accounting/FencedLease"
import * as SpendLease from "@switchyard/core/accounting/SpendLease"
import { Accounting, Refused } from "@switchyard/core/store/Accounting"
import type { AddCreditsRequest, CreditTotals, RecordRequest, Reservation, ReserveRequest, SettleRequest, Settlement } from "@switchyard/core/store/Accounting"
import { fromSqlError } from "@switchyard/core/store/StoreUnavailable"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import { Clock, Config, Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as GatewayProcesses from "./GatewayProcesses.ts"
import * as LeaseBook from "./LeaseBook.ts"
import * as LedgerBatch from "./LedgerBatch.ts"
import * as MoneyFacts from "./MoneyFacts.ts"
import * as MoneyStore from "./MoneyStore.ts"
import { InFlight } from "./InFlight.ts"
import { StoreChanges } from "../sql/StoreChanges.ts"
import { StoreStatements } from "../sql/StoreStatements.ts"
import * as Span from "../../instrumentation/Span.ts"
import * as Workers from "../../Workers.ts"

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

const defaultLeaseTtl = Duration.minutes(10)
const defaultIdleReturn = Duration.seconds(5)
const defaultFactsTtl = Duration.seconds(1)
const defaultLingerMs = 10

/**
 * The facts a lease is granted under, and the window it counts in: a slice of one day's room is
 * never spent on another day's requests (a key limit or budget that resets: the UTC day).
 */
const windowed = (f: MoneyFacts.MoneyFacts, nowMs: number) =>
  f.limitReset !== null || (f.budgets !== null && /(daily|weekly|monthly)=/u.test(f.budgets))
    ? `${f.signature}|${new Date(nowMs).toISOString().slice(0, 10)}`
    : f.signature

/** Why a key no longer admits requests, if it does not. */
const keyRefusal = (f: MoneyFacts.MoneyFacts, workspaceId: string, nowMs: number, required: bigint): Refused | "wrong_workspace" | undefined => {
  if (f.deleted) return new Refused({ reason: "key_deleted", requiredNanos: required })
  if (f.disabled) return new Refused({ reason: "key_disabled", requiredNanos: required })
  if (f.expiresAtMs !== null && f.expiresAtMs <= nowMs) return new Refused({ reason: "key_expired", requiredNanos: required })
  if (f.workspaceId !== workspaceId) return "wrong_workspace"
  return undefined
}

/** The ledger row of a settled request, as the ledger batch writes it. */
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

/** The key's facts, refused when the key stopped working. */
const checkedFactsOn = (facts: Effect.Success<ReturnType<typeof MoneyFacts.make>>) => (keyId: string, workspaceId: string, required: bigint) =>
  Effect.gen(function*() {
    const found = yield* facts.of(keyId)
    const nowMs = yield* Clock.currentTimeMillis
    if (Option.isNone(found)) return yield* Effect.fail(new Refused({ reason: "key_deleted", requiredNanos: required }))
    const refusal = keyRefusal(found.value, workspaceId, nowMs, required)
    if (refusal === "wrong_workspace") return yield* Effect.die(new Error(`accounting: key ${keyId} is not in workspace ${workspaceId}`))
    if (refusal !== undefined) return yield* Effect.fail(refusal)
    return { facts: found.value, nowMs }
  })

/** Runs a settlement once per generation id in this process; a second call waits for the first. */
const onceOn = (settling: Map<string, Deferred.Deferred<Settlement, StoreUnavailable> | null>) =>
(generationId: string, run: Effect.Effect<Settlement, StoreUnavailable>) =>
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

/** A workspace's prepaid credits: read, and added (told to every replica). */
const creditsOn = (store: MoneyStore.MoneyStore, changes: StoreChanges["Service"]) => {
  const credits = (workspaceId: string) =>
    Effect.gen(function*() {
      const read = yield* store.credits(workspaceId, yield* Clock.currentTimeMillis).pipe(fromSqlError("credits.read"))
      return {
        workspaceId,
        totalCreditsNanos: read.credits,
        totalUsageNanos: read.usage,
        heldNanos: read.held
      } satisfies CreditTotals
    })

  const addCredits = (request: AddCreditsRequest) =>
    Effect.gen(function*() {
      if (request.amountNanos <= 0n) return yield* Effect.die(new RangeError("addCredits: amount must be positive"))
      yield* store.addCredits({
        id: Crypto.randomUUID(),
        workspaceId: request.workspaceId,
        amountNanos: request.amountNanos,
        note: request.note,
        grantedByKeyId: request.grantedByKeyId,
        nowMs: yield* Clock.currentTimeMillis
      }).pipe(fromSqlError("credits.add"))
      yield* changes.changed({ _tag: "Workspace", workspaceId: request.workspaceId })
      return yield* credits(request.workspaceId)
    })
  return { credits, addCredits }
}

/** The money port, and this process's registration it holds its leases under. */
const build = (options: AccountingOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const statements = yield* StoreStatements
    const changes = yield* StoreChanges
    const inFlight = yield* InFlight
    const store = yield* MoneyStore.make
    // The embedded store with one worker belongs to this process alone.
    const processOptions = { sole: store.dialect === "sqlite", ...options.process }
    const owner = yield* GatewayProcesses.register(store, processOptions)
    const leaseTtl = Duration.fromInputUnsafe(options.leaseTtl ?? defaultLeaseTtl)
    const idleReturnMs = Duration.toMillis(Duration.fromInputUnsafe(options.idleReturn ?? defaultIdleReturn))
    const policy = options.policy ?? SpendLease.defaultPolicy
    const facts = yield* MoneyFacts.make(sql, options.factsTtl ?? defaultFactsTtl)
    yield* changes.listen((change) =>
      change._tag === "Key" ? facts.forget(change.keyId) : change._tag === "Workspace" ? facts.forgetAll : Effect.void
    )
    // Rows waiting for the next batch; the requests in flight beyond them will write theirs soon.
    let waitingRows = 0
    const batch = yield* LedgerBatch.make(store, statements, {
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
    const book = yield* LeaseBook.make(store, owner, { leaseTtl, idleReturnMs, policy, term }, batch.exclusive)

    // Settlements under way in this process, by generation id: a second settle waits for the first,
    // on a deferred made only then (ids are fresh, so almost every settlement is alone: `null`).
    const once = onceOn(new Map())
    const checkedFacts = checkedFactsOn(facts)
    const { credits, addCredits } = creditsOn(store, changes)

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
      const lease = yield* book.admit({
        reservationId: base.id,
        keyId: request.keyId,
        workspaceId: request.workspaceId,
        byok: request.byok,
        worst: request.amountNanos,
        signature: windowed(f, nowMs),
        nowMs
      })
      return { ...base, lease } satisfies Reservation
    })

    const settle = (reservation: Reservation, request: SettleRequest) =>
      once(
        request.generationId,
        Effect.gen(function*() {
          if (request.costNanos < 0n) return yield* Effect.die(new RangeError("settle: negative cost"))
          const nowMs = yield* Clock.currentTimeMillis
          const taken: LeaseBook.Taken = reservation.lease === null
            ? { charged: request.costNanos, lease: null, after: () => {} }
            : yield* book.settle(reservation.lease, reservation.id, request.costNanos, nowMs)
          const charged = taken.charged
          const written = yield* write(
            ledgerRow(reservation.keyId, reservation.workspaceId, request, charged, taken.lease, nowMs),
            taken.after
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
          yield* book.check({ keyId: request.keyId, workspaceId: request.workspaceId, byok: request.isByok, signature: windowed(f, nowMs), nowMs })
        }
        const written = yield* write(ledgerRow(request.keyId, request.workspaceId, request, 0n, null, nowMs), () => {})
        return { generationId: request.generationId, costNanos: 0n, capped: false, duplicate: !written.written } satisfies Settlement
      })

    const release = (reservation: Reservation) =>
      Effect.sync(() => {
        if (reservation.lease !== null) book.release(reservation.lease, reservation.id)
      })

    const accounting = Accounting.of({
      reserve: (request) => reserve(request).pipe(Span.within("Accounting.reserve")),
      settle: (reservation, request) => settle(reservation, request).pipe(Span.within("Accounting.settle")),
      record: (request) => record(request).pipe(Span.within("Accounting.record")),
      release,
      credits,
      addCredits
    })
    const process = GatewayProcesses.GatewayProcess.of({
      id: owner,
      staleAfter: Duration.fromInputUnsafe(processOptions.staleAfter ?? GatewayProcesses.defaultStaleAfter),
      sole: processOptions.sole
    })
    return { accounting, process }
  })

export const make = (options: AccountingOptions = {}) => Effect.map(build(options), ({ accounting }) => accounting)

/**
 * The money port on the SQL store, with its process registration (`GatewayProcesses`), key facts
 * and leases in memory, and ledger rows in batches.
 */
export const layerWith = (options: AccountingOptions) =>
  Layer.effectContext(Effect.map(build(options), ({ accounting, process }) =>
    Context.make(Accounting, accounting).pipe(Context.add(GatewayProcesses.GatewayProcess, process))))

/**
 * `SWITCHYARD_LEASE_IDLE_MS`: how long an unused lease keeps its slice before it hands it back
 * (default 5000). `SWITCHYARD_WORKERS` other than 1: the embedded store is shared by several
 * processes, so dead ones are found by their heartbeats, as replicas on PostgreSQL are.
 */
export const layer = Layer.unwrap(
  Effect.gen(function*() {
    const idleMs = yield* Config.Int("SWITCHYARD_LEASE_IDLE_MS").pipe(Config.withDefault(Duration.toMillis(defaultIdleReturn)))
    // Several worker processes share the embedded store: none of them owns it alone.
    const workers = yield* Workers.count
    return layerWith({
      idleReturn: Duration.millis(Math.max(1, idleMs)),
      ...(workers === 1 ? {} : { process: { sole: false } })
    })
  })
)
