import { assert, describe, it } from "@effect/vitest"
import * as MoneyModel from "../../src/accounting/MoneyModel.ts"

const t0 = Date.parse("2030-06-30T23:59:30Z")
const noon = Date.parse("2030-06-30T12:00:00Z")
const key: MoneyModel.KeySpec = { id: "k", workspace: "w", limit: 1_000n, reset: "daily", includeByokInLimit: false }
const workspace: MoneyModel.WorkspaceSpec = { id: "w", includeByokInBudgets: false, budgets: [] }
const grant = (id: string, owner: string, need: bigint, nowMs = t0): MoneyModel.Grant => ({
  id,
  owner,
  keyId: "k",
  workspaceId: "w",
  byok: false,
  ask: { need, desired: need, unit: 1n, edge: 0n, divisor: 1n },
  nowMs,
  expiresAtMs: nowMs + 600_000
})
const row = (generation: string, cost: bigint, lease: string | null, fence: string | null, createdMs = t0): MoneyModel.Row => ({
  generation,
  key: "k",
  workspace: "w",
  cost,
  byok: false,
  createdMs,
  lease,
  fence
})

describe("MoneyModel: the money store's rules in memory", () => {
  it("a grant is refused past the key limit with the room left, and counts every other process's hold", () => {
    const model = MoneyModel.make({ keys: [key], workspaces: [workspace] })
    const a = model.grant({ ...grant("a", "p1", 0n), ask: { need: 600n, desired: 600n, unit: 1n, edge: 0n, divisor: 1n } })
    assert.strictEqual(a.outcome, "ok")
    assert.strictEqual(a.granted, 600n)
    const b = model.grant({ ...grant("b", "p2", 0n), ask: { need: 401n, desired: 401n, unit: 1n, edge: 0n, divisor: 1n } })
    assert.deepStrictEqual(b, { outcome: "key_limit", granted: null, limit: 1_000n, reset: "daily", room: 400n, fence: null })
  })

  it("a row under its lease's token is written and leaves the lease; under a moved lease it is settled under the room left", () => {
    const model = MoneyModel.make({ keys: [key], workspaces: [workspace] })
    const a = model.grant({ ...grant("a", "p1", 0n, noon), ask: { need: 500n, desired: 500n, unit: 1n, edge: 0n, divisor: 1n } })
    assert.deepStrictEqual(model.flush([row("g1", 200n, "a", a.fence, noon)], noon + 600_000, noon), [
      { generation: "g1", cost: 200n, written: true, fenced: false }
    ])
    assert.deepStrictEqual(model.readLease("a"), { amount: 300n, fence: a.fence! })
    // p1 unseen for 30 s: p2's sweep takes its lease.
    assert.strictEqual(model.processes.sweep("p2", 30_000, noon + 31_000), 1)
    // Room left 800: a moved row of 800 is written, the next of 1 is refused.
    assert.deepStrictEqual(model.flush([row("g2", 800n, "a", a.fence, noon), row("g3", 1n, "a", a.fence, noon)], noon + 600_000, noon + 31_000), [
      { generation: "g2", cost: 800n, written: true, fenced: true },
      { generation: "g3", cost: null, written: false, fenced: true }
    ])
  })

  it("a daily limit counts only the day's rows: after midnight the room is whole again", () => {
    const model = MoneyModel.make({ keys: [key], workspaces: [workspace] })
    model.flush([row("g1", 1_000n, null, null)], t0 + 600_000, t0)
    assert.strictEqual(model.grant(grant("a", "p1", 1n)).outcome, "key_limit")
    const after = model.grant(grant("a", "p1", 1_000n, t0 + 60_000))
    assert.strictEqual(after.outcome, "ok")
    assert.strictEqual(after.granted, 1_000n)
    assert.deepStrictEqual(model.books().keySpend.map((r) => r.day).sort(), ["-infinity", "2030-06-30"])
  })
})
