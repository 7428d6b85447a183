import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as SpendLease from "../../src/accounting/SpendLease.ts"

/**
 * A model of the store and of the gateway processes that lease from it, driven by random
 * interleavings. The store is the oracle: it counts what the ledger charged and every lease row,
 * as `switchyard_lease` and `switchyard_flush` do; each process keeps only its in-memory lease.
 */
interface Admitted {
  readonly worst: bigint
}

interface Pending {
  readonly charged: bigint
}

interface Process {
  alive: boolean
  lease: SpendLease.Lease
  /** Requests admitted and not yet settled or released. */
  open: Array<Admitted>
  /** Settled rows waiting for their batch. */
  pending: Array<Pending>
  demand: SpendLease.Demand
}

interface Store {
  readonly limit: bigint
  /** The ledger's rows (charges), as the flushes wrote them. */
  readonly ledger: Array<bigint>
  /** What the counters say was spent: the ledger's sum, written with the rows. */
  spent: bigint
  /** Lease rows by process: their amount, and whether they still count (not expired or swept). */
  readonly rows: Map<number, { amount: bigint; counts: boolean }>
}

const held = (store: Store, except?: number) =>
  [...store.rows.entries()].reduce((sum, [p, row]) => (row.counts && p !== except ? sum + row.amount : sum), 0n)

const available = (store: Store, p: number) => store.limit - store.spent - held(store, p) - (store.rows.get(p)?.amount ?? 0n)

type Command =
  | { readonly _tag: "Request"; readonly p: number; readonly worst: bigint }
  | { readonly _tag: "Settle"; readonly p: number; readonly i: number; readonly costPercent: number }
  | { readonly _tag: "Release"; readonly p: number; readonly i: number }
  | { readonly _tag: "Flush"; readonly p: number }
  | { readonly _tag: "HandBack"; readonly p: number }
  | { readonly _tag: "Kill"; readonly p: number }
  | { readonly _tag: "Sweep" }

const command = (processes: number): fc.Arbitrary<Command> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ _tag: fc.constant("Request" as const), p: fc.nat(processes - 1), worst: fc.constantFrom(1n, 2n, 3n, 5n, 8n, 13n) }) },
    { weight: 4, arbitrary: fc.record({ _tag: fc.constant("Settle" as const), p: fc.nat(processes - 1), i: fc.nat(20), costPercent: fc.integer({ min: 0, max: 150 }) }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Release" as const), p: fc.nat(processes - 1), i: fc.nat(20) }) },
    { weight: 3, arbitrary: fc.record({ _tag: fc.constant("Flush" as const), p: fc.nat(processes - 1) }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("HandBack" as const), p: fc.nat(processes - 1) }) },
    { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Kill" as const), p: fc.nat(processes - 1) }) },
    { weight: 1, arbitrary: fc.constant({ _tag: "Sweep" as const }) }
  )

/** Runs the commands; after each one, the invariants. Returns how many requests were admitted. */
const run = (limit: bigint, processes: number, commands: ReadonlyArray<Command>) => {
  const store: Store = { limit, ledger: [], spent: 0n, rows: new Map() }
  const ps: Array<Process> = Array.from({ length: processes }, () => ({
    alive: true,
    lease: SpendLease.empty,
    open: [],
    pending: [],
    demand: SpendLease.noDemand(0)
  }))
  let admittedTotal = 0
  let now = 0
  for (const c of commands) {
    now += 10
    const proc = c._tag === "Sweep" ? undefined : ps[c.p]!
    if (proc !== undefined && !proc.alive) continue
    switch (c._tag) {
      case "Request": {
        const pr = proc!
        pr.demand = SpendLease.observe(pr.demand, c.worst, now)
        let next = SpendLease.admit(pr.lease, c.worst)
        if (next === undefined) {
          const ask = SpendLease.ask({ lease: pr.lease, worst: c.worst, demandPerSecond: pr.demand.perSecond, liveProcesses: processes })
          const granted = SpendLease.grantFrom(available(store, c.p), ask)
          if (granted !== undefined) {
            const row = store.rows.get(c.p) ?? { amount: 0n, counts: true }
            row.amount += granted
            store.rows.set(c.p, row)
            pr.lease = SpendLease.granted(pr.lease, granted)
            next = SpendLease.admit(pr.lease, c.worst)
            assert.isDefined(next, "a grant always covers what the request needs")
          }
        }
        if (next !== undefined) {
          pr.lease = next
          pr.open.push({ worst: c.worst })
          admittedTotal++
        }
        break
      }
      case "Settle": {
        const pr = proc!
        if (pr.open.length === 0) break
        const [request] = pr.open.splice(c.i % pr.open.length, 1)
        const cost = (request!.worst * BigInt(c.costPercent)) / 100n
        const settled = SpendLease.settle(pr.lease, request!.worst, cost)
        assert.isTrue(settled.charged <= cost, "never charged more than the cost")
        pr.lease = settled.lease
        pr.pending.push({ charged: settled.charged })
        break
      }
      case "Release": {
        const pr = proc!
        if (pr.open.length === 0) break
        const [request] = pr.open.splice(c.i % pr.open.length, 1)
        pr.lease = SpendLease.release(pr.lease, request!.worst)
        break
      }
      case "Flush": {
        // One statement: the ledger rows, the counters and the lease's amount, together.
        const pr = proc!
        const row = store.rows.get(c.p)
        for (const { charged } of pr.pending) {
          store.ledger.push(charged)
          store.spent += charged
          if (row !== undefined) row.amount -= charged
          pr.lease = SpendLease.flushed(pr.lease, charged, true)
        }
        pr.pending = []
        break
      }
      case "HandBack": {
        const pr = proc!
        const { lease, returned } = SpendLease.handBack(pr.lease)
        pr.lease = lease
        const row = store.rows.get(c.p)
        if (row !== undefined) row.amount -= returned
        break
      }
      case "Kill": {
        // Its requests and unwritten rows die with it (none was answered); its lease row stays
        // and counts until it is swept or expires.
        const pr = proc!
        pr.alive = false
        pr.open = []
        pr.pending = []
        break
      }
      case "Sweep": {
        for (const [p, row] of store.rows) if (!ps[p]!.alive) row.counts = false
        break
      }
    }
    // Invariants, after every step.
    const charged = store.ledger.reduce((a, b) => a + b, 0n)
    assert.strictEqual(charged, store.spent, "charged = ledger: the counters are the ledger's sum")
    assert.isTrue(store.spent + held(store) <= store.limit, "spent and every counted lease stay within the limit")
    for (const [p, pr] of ps.entries()) {
      assert.isTrue(SpendLease.free(pr.lease) >= 0n, "free is never negative")
      if (!pr.alive) continue
      const row = store.rows.get(p)?.amount ?? 0n
      assert.strictEqual(pr.lease.amount, row, "a live process's lease is what the store holds for it")
      const openWorst = pr.open.reduce((a, r) => a + r.worst, 0n)
      assert.strictEqual(pr.lease.reserved, openWorst, "reserved is the worst cases still open")
      assert.strictEqual(pr.lease.pending, pr.pending.reduce((a, r) => a + r.charged, 0n), "pending is the rows not yet written")
    }
    // What was admitted and not released can never exceed the limit, across processes.
    const outstanding = ps.reduce((sum, pr) => sum + (pr.alive ? pr.lease.reserved + pr.lease.pending : 0n), 0n)
    assert.isTrue(store.spent + outstanding <= store.limit, "admitted ≤ limit")
  }
  return { admittedTotal, store }
}

describe("SpendLease", () => {
  it("admitted ≤ limit and charged = ledger under random interleavings of processes, requests, settlements, flushes, hand-backs, kills and sweeps", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }).chain((processes) =>
          fc.tuple(fc.constant(processes), fc.bigInt({ min: 0n, max: 400n }), fc.array(command(processes), { maxLength: 300 }))
        ),
        ([processes, limit, commands]) => {
          run(limit, processes, commands)
        }
      ),
      { numRuns: 300 }
    )
  })

  it("exact at the edge: with uniform worst cases and requests coming to every process, exactly limit ÷ worst are admitted", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 0, max: 120 }),
        fc.constantFrom(1n, 3n, 7n),
        fc.array(fc.nat(3), { minLength: 600, maxLength: 600 }),
        (processes, affordable, worst, order) => {
          const commands: Array<Command> = []
          for (const p of order) {
            const target = p % processes
            commands.push({ _tag: "Request", p: target, worst })
            commands.push({ _tag: "Settle", p: target, i: 0, costPercent: 100 })
            if (p === 0) commands.push({ _tag: "Flush", p: target })
          }
          const { admittedTotal } = run(BigInt(affordable) * worst, processes, commands)
          assert.strictEqual(admittedTotal, Math.min(affordable, order.length))
        }
      ),
      { numRuns: 80 }
    )
  })

  it("grantFrom: refused below the need, exactly the need near the edge, a share of what remains in whole worst cases beyond it", () => {
    const ask = { need: 5n, desired: 100n, unit: 5n, edge: 40n, divisor: 4n }
    assert.isUndefined(SpendLease.grantFrom(4n, ask))
    assert.strictEqual(SpendLease.grantFrom(5n, ask), 5n)
    assert.strictEqual(SpendLease.grantFrom(40n, ask), 5n)
    assert.strictEqual(SpendLease.grantFrom(1000n, ask), 100n)
    assert.strictEqual(SpendLease.grantFrom(200n, ask), 50n)
    assert.strictEqual(SpendLease.grantFrom(62n, ask), 15n, "62 ÷ 4 = 15, in whole worst cases beyond the need")
    assert.strictEqual(SpendLease.grantFrom(-3n, SpendLease.upTo(0n)), undefined, "a scope spent beyond its limit refuses even a record")
    assert.strictEqual(SpendLease.grantFrom(0n, SpendLease.upTo(0n)), 0n)
    assert.strictEqual(SpendLease.grantFrom(7n, SpendLease.upTo(10n)), 7n, "up to: whatever is there")
  })

  it("ask: the need beyond what is free, a slice from demand or a minimum of worst cases, and a share per live process", () => {
    const lease = SpendLease.granted(SpendLease.empty, 3n)
    const asked = SpendLease.ask({ lease, worst: 10n, demandPerSecond: 1000n, liveProcesses: 3 })
    assert.deepStrictEqual(asked, { need: 7n, desired: 2000n, unit: 10n, edge: 80n, divisor: 12n })
    const quiet = SpendLease.ask({ lease: SpendLease.empty, worst: 10n, demandPerSecond: 0n, liveProcesses: 1 })
    assert.strictEqual(quiet.desired, 160n)
  })

  it("settle caps a cost above the worst case at the worst case plus what is free", () => {
    const lease = SpendLease.admit(SpendLease.granted(SpendLease.empty, 20n), 10n)!
    const settled = SpendLease.settle(lease, 10n, 35n)
    assert.strictEqual(settled.charged, 20n)
    assert.deepStrictEqual(settled.lease, { amount: 20n, reserved: 0n, pending: 20n })
    assert.deepStrictEqual(SpendLease.flushed(settled.lease, 20n, true), { amount: 0n, reserved: 0n, pending: 0n })
    assert.deepStrictEqual(SpendLease.flushed(settled.lease, 20n, false), { amount: 20n, reserved: 0n, pending: 0n }, "a row found written before charges nothing")
  })

  it("demand: a rate per second, half old and half the last second's", () => {
    let demand = SpendLease.noDemand(0)
    demand = SpendLease.observe(demand, 100n, 100)
    demand = SpendLease.observe(demand, 100n, 900)
    assert.strictEqual(demand.perSecond, 0n)
    demand = SpendLease.observe(demand, 50n, 1000)
    assert.strictEqual(demand.perSecond, 100n)
    demand = SpendLease.observe(demand, 0n, 2000)
    assert.strictEqual(demand.perSecond, 75n)
  })

  it("an unused lease is idle after the idle time, one in use never", () => {
    const unused = SpendLease.granted(SpendLease.empty, 5n)
    assert.isFalse(SpendLease.isIdle(unused, 1000, 5999, 5000))
    assert.isTrue(SpendLease.isIdle(unused, 1000, 6000, 5000))
    assert.isFalse(SpendLease.isIdle(SpendLease.admit(unused, 1n)!, 0, 100_000, 5000))
  })
})
