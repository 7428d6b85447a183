/**
 * The arithmetic of spend leases: a gateway process holds a slice of what a key, its workspace's
 * budgets and its workspace's credits still allow, and admits, settles and releases requests
 * against that slice in memory, so a request touches the store only when the slice runs out.
 *
 * **Details**
 *
 * A lease is, in the store, one hold owned by the process (its `amount`), counted against every
 * scope a hold counts against. In memory the process splits that amount into:
 *
 * - `reserved`: the worst cases of the requests admitted and not yet settled or released;
 * - `pending`: what settled requests were charged, while their ledger rows wait for the batch
 *   that writes them (the batch lowers the stored amount by the same sum, in the same transaction
 *   that raises the spend counters, so what the store counts never changes);
 * - the rest, {@link free}, which the next requests are admitted from.
 *
 * When a request's worst case does not fit in what is free, the process asks the store for more
 * ({@link ask}); the store answers with {@link grantFrom} of what its scopes still have. The slice
 * is sized from recent demand, a fraction of what remains and the number of live processes; once
 * what remains is within a few worst cases ({@link Policy.edgeRequests}), the store grants exactly
 * what the one request needs, as a per-request hold would. So across any number of processes the
 * admitted total never exceeds the limit, and no more than one request's worth is left stranded
 * in another process's lease at the edge.
 *
 * Amounts are integer nano-USD. Every function here is pure.
 *
 * @since 0.3.0
 */

/**
 * A process's lease on one key (for BYOK or non-BYOK requests), in nano-USD.
 *
 * @since 0.3.0
 */
export interface Lease {
  /** What the store holds for the lease right now. */
  readonly amount: bigint
  /** Worst cases of admitted requests not yet settled or released. */
  readonly reserved: bigint
  /** Charges settled in memory whose ledger rows are not written yet. */
  readonly pending: bigint
}

/**
 * A lease that holds nothing yet.
 *
 * @since 0.3.0
 */
export const empty: Lease = { amount: 0n, reserved: 0n, pending: 0n }

/**
 * What new requests can be admitted from.
 *
 * @since 0.3.0
 */
export const free = (lease: Lease): bigint => lease.amount - lease.reserved - lease.pending

/**
 * Admits a request's worst case from what is free, or `undefined` when it does not fit.
 *
 * @since 0.3.0
 */
export const admit = (lease: Lease, worst: bigint): Lease | undefined =>
  worst <= free(lease) ? { ...lease, reserved: lease.reserved + worst } : undefined

/**
 * Settles an admitted request: its worst case leaves `reserved`, and what it is charged (its cost,
 * capped at its worst case plus what is free) becomes `pending` until its row is written.
 *
 * @since 0.3.0
 */
export const settle = (lease: Lease, worst: bigint, cost: bigint): { readonly lease: Lease; readonly charged: bigint } => {
  const room = worst + free(lease)
  const charged = cost < room ? cost : room < 0n ? 0n : room
  return { lease: { ...lease, reserved: lease.reserved - worst, pending: lease.pending + charged }, charged }
}

/**
 * Drops an admitted request that was not charged: its worst case is free again.
 *
 * @since 0.3.0
 */
export const release = (lease: Lease, worst: bigint): Lease => ({ ...lease, reserved: lease.reserved - worst })

/**
 * Adds what the store granted.
 *
 * @since 0.3.0
 */
export const granted = (lease: Lease, amount: bigint): Lease => ({ ...lease, amount: lease.amount + amount })

/**
 * A settled row's batch committed: its charge leaves `pending` and, when the row was written (not
 * found written before), the store's amount by the same sum.
 *
 * @since 0.3.0
 */
export const flushed = (lease: Lease, charged: bigint, written: boolean): Lease => ({
  ...lease,
  amount: written ? lease.amount - charged : lease.amount,
  pending: lease.pending - charged
})

/**
 * Hands back what is free: the lease keeps only what admitted and settled requests still use.
 *
 * @since 0.3.0
 */
export const handBack = (lease: Lease): { readonly lease: Lease; readonly returned: bigint } => {
  const returned = free(lease) > 0n ? free(lease) : 0n
  return { lease: { ...lease, amount: lease.amount - returned }, returned }
}

/**
 * Whether a lease is in use: an admitted request or an unwritten charge still counts on it.
 *
 * @since 0.3.0
 */
export const inUse = (lease: Lease): boolean => lease.reserved > 0n || lease.pending > 0n

/**
 * How slices are sized.
 *
 * @since 0.3.0
 */
export interface Policy {
  /** Within this many worst cases of what remains, a grant is exactly what one request needs. */
  readonly edgeRequests: number
  /** A slice is at most what remains divided by this, times the number of live processes. */
  readonly shareDivisor: number
  /** A slice covers this many seconds of recent demand... */
  readonly horizonSeconds: number
  /** ...and at least this many worst cases of the request that asks. */
  readonly minRequests: number
}

/**
 * @since 0.3.0
 */
export const defaultPolicy: Policy = { edgeRequests: 8, shareDivisor: 4, horizonSeconds: 2, minRequests: 16 }

/**
 * What a process asks the store for: at least `need` (or the request is refused), ideally
 * `desired`, in multiples of `unit` beyond `need`; exactly `need` once what remains is at most
 * `edge`; never more than what remains divided by `divisor`.
 *
 * @since 0.3.0
 */
export interface Ask {
  readonly need: bigint
  readonly desired: bigint
  readonly unit: bigint
  readonly edge: bigint
  readonly divisor: bigint
}

/**
 * The ask of a request whose worst case does not fit in what is free.
 *
 * @since 0.3.0
 */
export const ask = (input: {
  readonly lease: Lease
  readonly worst: bigint
  /** Nano-USD admitted per second on this lease, recently. */
  readonly demandPerSecond: bigint
  readonly liveProcesses: number
  readonly policy?: Policy
}): Ask => {
  const policy = input.policy ?? defaultPolicy
  const available = free(input.lease)
  const need = input.worst > available ? input.worst - available : 0n
  const byDemand = input.demandPerSecond * BigInt(policy.horizonSeconds)
  const byRequests = input.worst * BigInt(policy.minRequests)
  const desired = [need, byDemand, byRequests].reduce((a, b) => (a > b ? a : b))
  return {
    need,
    desired,
    unit: input.worst > 0n ? input.worst : 1n,
    edge: input.worst * BigInt(policy.edgeRequests),
    divisor: BigInt(policy.shareDivisor * Math.max(1, input.liveProcesses))
  }
}

/**
 * An ask that takes whatever is available up to `amount` and is refused only when a scope is
 * already spent beyond its limit: for a cost above its worst case, and (at 0) for the checks of a
 * request that holds nothing.
 *
 * @since 0.3.0
 */
export const upTo = (amount: bigint): Ask => ({ need: 0n, desired: amount, unit: 1n, edge: 0n, divisor: 1n })

/**
 * What the store grants of an ask when its scopes have `available` left beyond every hold (this
 * process's lease included): `undefined` when even `need` does not fit. The store's
 * `switchyard_lease` function computes the same.
 *
 * @since 0.3.0
 */
export const grantFrom = (available: bigint, request: Ask): bigint | undefined => {
  if (available < request.need) return undefined
  if (available <= request.edge) return request.need
  const share = available / request.divisor
  const target = request.desired < share ? request.desired : share
  if (target <= request.need) return request.need
  return request.need + ((target - request.need) / request.unit) * request.unit
}

/**
 * Recent demand on a lease: an exponentially weighted rate of admitted worst cases.
 *
 * @since 0.3.0
 */
export interface Demand {
  readonly perSecond: bigint
  readonly windowStartMs: number
  readonly windowNanos: bigint
}

/**
 * @since 0.3.0
 */
export const noDemand = (nowMs: number): Demand => ({ perSecond: 0n, windowStartMs: nowMs, windowNanos: 0n })

/**
 * Counts an admitted worst case; every full second the rate becomes half the old rate plus half
 * the last second's total.
 *
 * @since 0.3.0
 */
export const observe = (demand: Demand, nanos: bigint, nowMs: number): Demand => {
  if (nowMs - demand.windowStartMs < 1000) return { ...demand, windowNanos: demand.windowNanos + nanos }
  const seconds = Math.max(1, Math.floor((nowMs - demand.windowStartMs) / 1000))
  const lastRate = demand.windowNanos / BigInt(seconds)
  return { perSecond: (demand.perSecond + lastRate) / 2n, windowStartMs: nowMs, windowNanos: nanos }
}

/**
 * Whether an unused lease should be handed back: nothing counts on it and it was last used at
 * least `idleMs` ago.
 *
 * @since 0.3.0
 */
export const isIdle = (lease: Lease, lastUsedMs: number, nowMs: number, idleMs: number): boolean =>
  !inUse(lease) && nowMs - lastUsedMs >= idleMs
