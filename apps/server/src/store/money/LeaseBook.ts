/**
 * The lease book: this process's spend leases in memory, over the money store (`MoneyStore`), with
 * no SQL of its own and no dialect. It holds each key's lease (what it was granted, what requests
 * admitted from it hold, what their rows spend until their batch is written), its fencing token
 * and how long it is valid (core's `SpendLease` and `FencedLease` are the rules), and keeps them:
 * grants when a request does not fit, hand-backs when idle or when the facts changed, renewals
 * while in use, and a re-read of a lease's row after a failure that may have committed.
 *
 * **Details**
 *
 * - Admission. A request is admitted from the key's lease while it is valid by this process's
 *   monotonic clock and has room; else one grant (`MoneyStore.grant`) checks the scopes and asks
 *   for a slice, and concurrent requests on the same lease wait for that one grant.
 * - Settlement. In memory against the lease; the ledger row carries the lease and its token, and
 *   `after` (run once the row's batch ended) moves the lease as the store moved it.
 * - Fencing. A request admitted under a token the store has taken since is not settled: no row,
 *   no charge (answered 503).
 * - Failures. After a grant, hand-back or write that failed (it may have committed), the lease is
 *   read again from the store before it grants or admits again. A lease that could not be handed
 *   back stays in memory, marked to return, and is handed back once the store answers.
 * - Upkeep every second: idle leases go back (and those not handed back yet are tried again),
 *   leases in use are renewed ahead of their validity's end, and every ten seconds the number of
 *   live processes (which sizes slices) is read again.
 */
import * as FencedLease from "@switchyard/core/accounting/FencedLease"
import * as SpendLease from "@switchyard/core/accounting/SpendLease"
import { Refused } from "@switchyard/core/store/Accounting"
import type { RefusalReason } from "@switchyard/core/store/Accounting"
import { fromSqlError, StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Clock, Duration, Effect, Schedule, Semaphore } from "effect"
import type { Scope } from "effect"
import * as Crypto from "node:crypto"
import type { After, Written } from "./LedgerBatch.ts"
import type { MoneyStore } from "./MoneyStorePort.ts"

export interface LeaseBookOptions {
  /** How long a lease counts after its last use if its process never hands it back. */
  readonly leaseTtl: Duration.Duration
  /** A lease unused this long hands back what is free. */
  readonly idleReturnMs: number
  readonly policy: SpendLease.Policy
  /** When a lease stops being valid by this process's clock, and when it is renewed. */
  readonly term: FencedLease.Term
}

/** What a settlement takes from its lease: the charge, the lease its row names, and what runs once the row's batch ended. */
export interface Taken {
  readonly charged: bigint
  readonly lease: { readonly id: string; readonly fence: string | null } | null
  readonly after: After
}

export interface LeaseBook {
  /**
   * Admits `worst` for the reservation `reservationId` from the key's lease (granted from the store
   * when it has too little, under the facts `signature`); the lease's id.
   */
  readonly admit: (request: {
    readonly reservationId: string
    readonly keyId: string
    readonly workspaceId: string
    readonly byok: boolean
    readonly worst: bigint
    readonly signature: string
    readonly nowMs: number
  }) => Effect.Effect<string, Refused | StoreUnavailable>
  /** Settles a reservation admitted from `leaseId` at `cost`; fails when its lease was taken since. */
  readonly settle: (leaseId: string, reservationId: string, cost: bigint, nowMs: number) => Effect.Effect<Taken, StoreUnavailable>
  /** Gives back what a reservation holds, unsettled. */
  readonly release: (leaseId: string, reservationId: string) => void
  /**
   * The checks of a reservation at amount 0, for a request recorded without one: a scope already
   * spent beyond its limit refuses.
   */
  readonly check: (request: {
    readonly keyId: string
    readonly workspaceId: string
    readonly byok: boolean
    readonly signature: string
    readonly nowMs: number
  }) => Effect.Effect<void, Refused | StoreUnavailable>
}

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
  /** Until when (monotonic) a check at amount 0 under `signature` found no scope over its limit. */
  checkedUntilNanos: bigint
  readonly lock: Semaphore.Semaphore
  /** The reservations admitted from it and not yet settled or released (worst case, facts, token), by reservation id. */
  readonly open: Map<string, { readonly worst: bigint; readonly signature: string; readonly fence: string }>
}

/** The lease a request was admitted under is gone: the request is answered 503 and not charged. */
const leaseTaken = () =>
  new StoreUnavailable({ operation: "accounting.lease_taken", cause: "the spend lease was taken by the store (swept or expired)" })

/** One lease book's state: its store and settings, and the leases it keeps. */
interface Book {
  readonly store: MoneyStore
  readonly owner: string
  readonly options: LeaseBookOptions
  readonly exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
  /** The leases in use, by key and BYOK. */
  readonly leases: Map<string, LeaseEntry>
  readonly byId: Map<string, LeaseEntry>
  /** Idle leases on their way back to the store: kept (and tried again) until a hand-back succeeds. */
  readonly returning: Set<LeaseEntry>
  /** The gateway processes alive on the store, read every ten upkeep ticks: it sizes slices. */
  liveProcesses: number
  ticks: number
}

const leaseFor = (book: Book, keyId: string, workspaceId: string, byok: boolean, signature: string, nowMs: number): LeaseEntry => {
  const name = `${keyId}|${byok}`
  const existing = book.leases.get(name)
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
    checkedUntilNanos: 0n,
    lock: Semaphore.makeUnsafe(1),
    open: new Map()
  }
  book.leases.set(name, entry)
  book.byId.set(entry.id, entry)
  return entry
}

/** A statement on the lease failed and may have committed: the lease is read again before it is used. */
const markUncertain = (entry: LeaseEntry) => {
  entry.reread = true
  entry.held = { ...entry.held, validUntilNanos: 0n }
}

/** Reads the lease's row as the last write left it (no write under way), when a failure left it uncertain. */
const reread = (book: Book, entry: LeaseEntry) =>
  Effect.suspend(() => {
    if (!entry.reread) return Effect.void
    return book.exclusive(Effect.gen(function*() {
      const row = yield* book.store.readLease(entry.id).pipe(fromSqlError("accounting.lease_read"))
      entry.held = FencedLease.reread(entry.held, row)
      entry.reread = false
    }))
  })

/** Runs `effect` holding the lease's lock, once the lease is known as the store has it. */
const locked = <A, E, R>(book: Book, entry: LeaseEntry, effect: Effect.Effect<A, E, R>) =>
  entry.lock.withPermits(1)(Effect.andThen(reread(book, entry), effect))

/** Gives back what is free of a lease (one statement, only when something is free); whether it went back. */
const handBack = (book: Book, entry: LeaseEntry) =>
  Effect.suspend(() => {
    const { lease, returned } = SpendLease.handBack(entry.held.lease)
    if (returned === 0n) return Effect.succeed(true)
    entry.held = { ...entry.held, lease }
    return book.store.handBack(entry.id, returned).pipe(
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
const returnAll = (book: Book, entry: LeaseEntry) =>
  Effect.suspend(() => {
    const fence = entry.held.fence
    if (fence === null) return Effect.succeed(true)
    return book.store.end(entry.id, fence).pipe(
      fromSqlError("accounting.lease_return"),
      Effect.as(true),
      Effect.catchTag("StoreUnavailable", (e) => Effect.as(Effect.logWarning("accounting: could not hand back a lease", e.cause), false))
    )
  })

/** Asks the store to grant the lease more; the refusal (for a request of `worst`), or nothing. */
const grant = (book: Book, entry: LeaseEntry, request: SpendLease.Ask, worst: bigint, nowMs: number) =>
  Effect.gen(function*() {
    // Measured before the statement: the store cannot take the lease sooner than a stale time after this.
    const askedAt = yield* Clock.monotonicTimeNanos
    const row = yield* book.store.grant({
      id: entry.id,
      owner: book.owner,
      keyId: entry.keyId,
      workspaceId: entry.workspaceId,
      byok: entry.byok,
      ask: request,
      nowMs,
      expiresAtMs: nowMs + Duration.toMillis(book.options.leaseTtl)
    }).pipe(
      fromSqlError("accounting.lease"),
      Effect.tapError(() => Effect.sync(() => markUncertain(entry)))
    )
    if (row.outcome === "ok") {
      entry.held = FencedLease.granted(entry.held, { amount: row.granted!, fence: row.fence }, askedAt, book.options.term)
      return undefined
    }
    if (row.outcome === "wrong_workspace") {
      return yield* Effect.die(new Error(`accounting: key ${entry.keyId} is not in workspace ${entry.workspaceId}`))
    }
    // What the refusing scope has left, as this process sees it: the store's room plus what its lease has free.
    const remaining = row.room === null ? undefined : row.room + SpendLease.free(entry.held.lease)
    return new Refused({
      reason: row.outcome satisfies RefusalReason,
      requiredNanos: worst,
      limitNanos: row.limit === null ? undefined : row.limit,
      remainingNanos: remaining,
      window: row.reset
    })
  })

/** Under the lease's lock: hands back what was granted under other facts before the lease serves new ones. */
const adopt = (book: Book, entry: LeaseEntry, signature: string) =>
  Effect.gen(function*() {
    if (entry.signature === signature) return
    if (!(yield* handBack(book, entry))) {
      return yield* Effect.fail(new StoreUnavailable({ operation: "accounting.lease_return", cause: "hand-back failed" }))
    }
    entry.signature = signature
  })

/**
 * Admits `worst` from the key's lease while it is valid, asking the store when it is not or
 * when `worst` does not fit; the lease's fencing token it was admitted under.
 */
const admitFrom = (book: Book, entry: LeaseEntry, worst: bigint, signature: string, nowMs: number) =>
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
    return yield* locked(book, entry, Effect.gen(function*() {
      yield* adopt(book, entry, signature)
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
        const asked = SpendLease.ask({
          lease: entry.held.lease,
          worst,
          demandPerSecond: entry.demand.perSecond,
          liveProcesses: book.liveProcesses,
          policy: book.options.policy
        })
        const refused = yield* grant(book, entry, asked, worst, nowMs)
        if (refused !== undefined) return yield* Effect.fail(refused)
      }
    }))
  })

const renew = (book: Book, entry: LeaseEntry, nowMs: number) =>
  // A refusal leaves the lease to expire by its clock; the next admission asks (and is refused) itself.
  locked(book, entry, grant(book, entry, SpendLease.upTo(0n), 0n, nowMs)).pipe(
    Effect.asVoid,
    Effect.catchTag("StoreUnavailable", (e) => Effect.logDebug("accounting: could not renew a lease", e.cause))
  )

/**
 * One tick of upkeep: idle leases hand back what is free (and those not handed back yet are tried
 * again), leases in use are renewed ahead of their validity's end, and every ten ticks the number
 * of live processes (which sizes slices) is read again.
 */
const upkeep = (book: Book) =>
  Effect.gen(function*() {
    const nowMs = yield* Clock.currentTimeMillis
    const nowNanos = yield* Clock.monotonicTimeNanos
    for (const [name, entry] of book.leases) {
      if (SpendLease.isIdle(entry.held.lease, entry.lastUsedMs, nowMs, book.options.idleReturnMs)) {
        // Nothing counts on it: the whole lease goes back, and its row with it.
        book.leases.delete(name)
        book.returning.add(entry)
      } else if (entry.reread || FencedLease.renewDue(entry.held, nowNanos, book.options.term)) {
        yield* renew(book, entry, nowMs)
      }
    }
    for (const entry of book.returning) {
      const returned = yield* locked(book, entry, returnAll(book, entry)).pipe(Effect.catchTag("StoreUnavailable", () => Effect.succeed(false)))
      if (returned) {
        book.returning.delete(entry)
        book.byId.delete(entry.id)
      }
    }
    book.ticks++
    if (book.ticks % 10 === 0) {
      const live = yield* book.store.processes.live(Duration.millis(book.options.term.sweepAfterMs)).pipe(fromSqlError("accounting.processes"))
      book.liveProcesses = Math.max(1, live)
    }
  })

const admit = (book: Book): LeaseBook["admit"] => (request) =>
  Effect.gen(function*() {
    const entry = leaseFor(book, request.keyId, request.workspaceId, request.byok, request.signature, request.nowMs)
    const fence = yield* admitFrom(book, entry, request.worst, request.signature, request.nowMs)
    entry.open.set(request.reservationId, { worst: request.worst, signature: request.signature, fence })
    return entry.id
  })

/**
 * What a reservation admitted under the lease's current facts takes: a cost above its worst case
 * takes what the lease has free, then what the store still allows.
 */
const settleOpen = (book: Book, entry: LeaseEntry, open: { readonly worst: bigint; readonly fence: string }, cost: bigint, nowMs: number) =>
  Effect.gen(function*() {
    const beyond = cost - open.worst - SpendLease.free(entry.held.lease)
    if (beyond > 0n) {
      yield* locked(book, entry, grant(book, entry, SpendLease.upTo(beyond), open.worst, nowMs)).pipe(
        Effect.catchTag("StoreUnavailable", () => Effect.void)
      )
      if (open.fence !== entry.held.fence) return yield* Effect.fail(leaseTaken())
    }
    const settled = SpendLease.settle(entry.held.lease, open.worst, cost)
    entry.held = { ...entry.held, lease: settled.lease }
    return settled.charged
  })

const settle = (book: Book): LeaseBook["settle"] => (leaseId, reservationId, cost, nowMs) =>
  Effect.gen(function*() {
    const entry = book.byId.get(leaseId)
    if (entry === undefined) return { charged: cost, lease: null, after: () => {} } satisfies Taken
    let charged = cost
    const open = entry.open.get(reservationId)
    entry.open.delete(reservationId)
    // Admitted under a lease the store has taken since: no row, no charge.
    if (open !== undefined && open.fence !== entry.held.fence) return yield* Effect.fail(leaseTaken())
    const fence = entry.held.fence
    if (open === undefined) {
      // Settled or released before: it holds nothing any more, and may take only what is free.
      const settled = SpendLease.settle(entry.held.lease, 0n, cost)
      entry.held = { ...entry.held, lease: settled.lease }
      charged = settled.charged
    } else if (open.signature === entry.signature) {
      charged = yield* settleOpen(book, entry, open, cost, nowMs)
    } else {
      // The lease has moved on to another window (or other facts) since the request was
      // admitted: what is free now is not that window's, so the request takes its own worst case at most.
      charged = cost < open.worst ? cost : open.worst
      const lease = entry.held.lease
      entry.held = { ...entry.held, lease: { ...lease, reserved: lease.reserved - open.worst, pending: lease.pending + charged } }
    }
    entry.lastUsedMs = nowMs
    const after: After = (written: Written | undefined, uncertain: boolean) => {
      // A lease taken meanwhile holds nothing of this row any more.
      if (entry.held.fence !== fence) return
      entry.held = { ...entry.held, lease: SpendLease.flushed(entry.held.lease, charged, written?.written === true) }
      if (uncertain) markUncertain(entry)
    }
    return { charged, lease: { id: entry.id, fence }, after } satisfies Taken
  })

const release = (book: Book): LeaseBook["release"] => (leaseId, reservationId) => {
  const entry = book.byId.get(leaseId)
  const open = entry?.open.get(reservationId)
  if (entry === undefined || open === undefined) return
  entry.open.delete(reservationId)
  // A lease taken since holds nothing of it any more.
  if (open.fence === entry.held.fence) entry.held = { ...entry.held, lease: SpendLease.release(entry.held.lease, open.worst) }
}

const check = (book: Book): LeaseBook["check"] => (request) =>
  Effect.gen(function*() {
    const entry = leaseFor(book, request.keyId, request.workspaceId, request.byok, request.signature, request.nowMs)
    const now = yield* Clock.monotonicTimeNanos
    entry.lastUsedMs = request.nowMs
    // Under the same facts, a lease held or a recent check answers without a statement: nothing
    // but a change of the facts (which changes the signature) puts a scope over its limit.
    if (
      entry.signature === request.signature &&
      (SpendLease.inUse(entry.held.lease) || entry.held.lease.amount !== 0n || now < entry.checkedUntilNanos)
    ) return
    const refused = yield* locked(book, entry, Effect.gen(function*() {
      yield* adopt(book, entry, request.signature)
      return yield* grant(book, entry, SpendLease.upTo(0n), 0n, request.nowMs)
    }))
    if (refused !== undefined) return yield* Effect.fail(refused)
    entry.checkedUntilNanos = FencedLease.validUntil(now, book.options.term)
  })

/**
 * A lease book for the gateway process `owner`, kept (upkeep every second, or every half idle
 * time when that is shorter) while the scope is open. `exclusive` runs a re-read of a lease's row
 * while no ledger batch is being written.
 */
export const make = (
  store: MoneyStore,
  owner: string,
  options: LeaseBookOptions,
  exclusive: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
): Effect.Effect<LeaseBook, never, Scope.Scope> =>
  Effect.gen(function*() {
    const book: Book = { store, owner, options, exclusive, leases: new Map(), byId: new Map(), returning: new Set(), liveProcesses: 1, ticks: 0 }
    yield* upkeep(book).pipe(
      Effect.catchCause((cause) => Effect.logWarning("accounting: lease upkeep failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(Math.min(1000, Math.max(10, options.idleReturnMs / 2))))),
      Effect.forkScoped
    )
    return { admit: admit(book), settle: settle(book), release: release(book), check: check(book) } satisfies LeaseBook
  })
