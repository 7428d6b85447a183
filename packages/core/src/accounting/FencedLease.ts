/**
 * When a process may admit from its spend lease: only while the lease is valid by the process's
 * own monotonic clock, and only under the fencing token of the lease row it was granted.
 *
 * **Details**
 *
 * The store may take a lease away from a live process: another process sweeps the leases of a
 * process it has not seen for `sweepAfterMs` (a process frozen by SIGSTOP, or cut off from the
 * store, looks dead), and any grant on the key deletes holds past their expiry (`ttlMs` after
 * their last grant or write). Every grant refreshes the process's "seen" time and the lease's
 * expiry, in the statement that grants; so a lease granted by a statement asked at monotonic time
 * `t` cannot be taken before `t + min(sweepAfterMs, ttlMs)`. The process counts it valid until
 * {@link validUntil}: that bound less `marginMs`, measured from before the grant was asked. A
 * process that resumes after a freeze finds its lease invalid and asks the store again before it
 * admits.
 *
 * Each lease row carries a fencing token (`fence`), new whenever the row is created. A grant
 * answers with the row's token; the ledger rows settled against the lease carry the token they
 * were admitted under, and the store writes a row only while the lease row has that token. A
 * grant or re-read that finds another token (or no row) means the lease was taken: what the
 * process held under the old token is gone ({@link lost}) and it starts again from what the store
 * says. A row its admitted requests were answered under is still written when the key's current
 * room allows it ({@link settlesMoved}): the upstream was paid, so only a row that would overshoot
 * a limit is refused.
 *
 * Pure: times are the caller's monotonic nanoseconds.
 *
 * @since 0.4.0
 */
import * as SpendLease from "./SpendLease.ts"

/**
 * How long a lease is counted valid.
 *
 * @since 0.4.0
 */
export interface Term {
  /** The store sweeps the leases of a process unseen this long. */
  readonly sweepAfterMs: number
  /** The store may delete a lease this long after its last grant or write. */
  readonly ttlMs: number
  /** A lease stops being valid this long before the store may take it (at most half that time). */
  readonly marginMs: number
  /** A lease in use is renewed once it is valid for less than this (at most a third of that time). */
  readonly renewAheadMs: number
}

/**
 * @since 0.4.0
 */
export const defaultTerm: Term = { sweepAfterMs: 30_000, ttlMs: 600_000, marginMs: 5_000, renewAheadMs: 10_000 }

const nanos = (ms: number): bigint => BigInt(Math.max(0, Math.round(ms))) * 1_000_000n

/**
 * The end of a lease's validity when its grant was asked at `askedAtNanos`. A check at amount 0
 * that found no scope over its limit holds as long, under the same facts: only a change of the
 * facts (a lower limit, a new window), which the caller's signature names, could make it refuse.
 *
 * @since 0.4.0
 */
export const validUntil = (askedAtNanos: bigint, term: Term = defaultTerm): bigint => {
  const span = Math.min(term.sweepAfterMs, term.ttlMs)
  return askedAtNanos + nanos(span - Math.min(term.marginMs, span / 2))
}

/**
 * A lease as its process holds it: the arithmetic (`SpendLease`), the token of the row it was
 * granted under (`null`: no row yet) and the end of its validity.
 *
 * @since 0.4.0
 */
export interface Held {
  readonly lease: SpendLease.Lease
  readonly fence: string | null
  readonly validUntilNanos: bigint
}

/**
 * Nothing held, nothing valid.
 *
 * @since 0.4.0
 */
export const empty: Held = { lease: SpendLease.empty, fence: null, validUntilNanos: 0n }

/**
 * Whether the lease may be admitted from at `nowNanos`.
 *
 * @since 0.4.0
 */
export const isValid = (held: Held, nowNanos: bigint): boolean => held.fence !== null && nowNanos < held.validUntilNanos

/**
 * Whether a lease in use should be renewed now, before its validity runs out.
 *
 * @since 0.4.0
 */
export const renewDue = (held: Held, nowNanos: bigint, term: Term = defaultTerm): boolean =>
  held.fence !== null && held.validUntilNanos - nowNanos < nanos(Math.min(term.renewAheadMs, Math.min(term.sweepAfterMs, term.ttlMs) / 3))

/**
 * Admits `worst` while the lease is valid and has it free; `undefined` otherwise (the caller
 * asks the store).
 *
 * @since 0.4.0
 */
export const admit = (held: Held, worst: bigint, nowNanos: bigint): Held | undefined => {
  if (!isValid(held, nowNanos)) return undefined
  const lease = SpendLease.admit(held.lease, worst)
  return lease === undefined ? undefined : { ...held, lease }
}

/**
 * The lease was taken from the process: nothing under the old token counts any more.
 *
 * @since 0.4.0
 */
const lost = (): Held => empty

/**
 * A grant answered: `amount` added to the row whose token is `fence` (`null`: the store holds no
 * row, as when nothing was granted to a lease that had none), by a statement asked at
 * `askedAtNanos`. Under the same token the lease grows and its validity starts again; under
 * another, the old lease was taken and only the new grant is held.
 *
 * @since 0.4.0
 */
export const granted = (
  held: Held,
  answer: { readonly amount: bigint; readonly fence: string | null },
  askedAtNanos: bigint,
  term: Term = defaultTerm
): Held => {
  if (answer.fence === null) return held.fence === null ? held : lost()
  const base = held.fence === answer.fence || held.fence === null ? held.lease : SpendLease.empty
  return { lease: SpendLease.granted(base, answer.amount), fence: answer.fence, validUntilNanos: validUntil(askedAtNanos, term) }
}

/**
 * What the store says the lease row holds now (`undefined`: no row), read while no write or
 * grant on the lease is under way. Under the same token the amount is the store's; otherwise the
 * old lease was taken and the row found, if any, is held afresh (valid only once it is granted
 * again).
 *
 * @since 0.4.0
 */
export const reread = (held: Held, stored: { readonly amount: bigint; readonly fence: string } | undefined): Held => {
  if (stored === undefined) return held.fence === null ? held : lost()
  if (held.fence === stored.fence) return { ...held, lease: { ...held.lease, amount: stored.amount } }
  if (held.fence === null) return { lease: { ...held.lease, amount: stored.amount }, fence: stored.fence, validUntilNanos: 0n }
  return { lease: { ...SpendLease.empty, amount: stored.amount }, fence: stored.fence, validUntilNanos: 0n }
}

/**
 * Whether a ledger row answered under a lease that moved (swept, expired and taken over, or fenced
 * by a newer token) is written: the request was admitted and the upstream paid, so the row is
 * settled in the flush's transaction under the key's current room, with the checks a grant makes
 * (key limit, workspace budgets, prepaid credits, each counting every open hold), as a grant whose
 * `need` is the row's cost. `rooms` holds what each scope that counts the row still allows
 * (`undefined`: the scope does not count it). A row costing nothing is always written; only a row
 * that would overshoot a scope is refused.
 *
 * @since 0.4.0
 */
export const settlesMoved = (cost: bigint, rooms: ReadonlyArray<bigint | undefined>): boolean =>
  cost <= 0n || rooms.every((room) => room === undefined || cost <= room)
