import type { ActivityItem } from "@switchyard/core/schema/Activity"
import { assert, describe, it } from "vitest"
import * as BudgetWindows from "../src/BudgetWindows.ts"

const row = (date: string, usage: number, byok: number): ActivityItem => ({
  date,
  model: "acme/embed",
  model_permaslug: "acme/embed",
  endpoint_id: "alpha@acme/embed",
  provider_name: "Alpha",
  usage,
  byok_usage_inference: byok,
  requests: 1,
  prompt_tokens: 1,
  completion_tokens: 0,
  reasoning_tokens: 0
})

describe("BudgetWindows", () => {
  it("starts windows at the UTC day, the Monday and the 1st", () => {
    // 2026-11-24 is a Tuesday; 2026-11-23 the Monday; 2026-11-22 a Sunday, whose week began on the 16th.
    assert.strictEqual(BudgetWindows.windowStart("daily", "2026-11-24"), "2026-11-24")
    assert.strictEqual(BudgetWindows.windowStart("weekly", "2026-11-24"), "2026-11-23")
    assert.strictEqual(BudgetWindows.windowStart("weekly", "2026-11-23"), "2026-11-23")
    assert.strictEqual(BudgetWindows.windowStart("weekly", "2026-11-22"), "2026-11-16")
    assert.strictEqual(BudgetWindows.windowStart("monthly", "2026-11-24"), "2026-11-01")
    assert.strictEqual(BudgetWindows.windowStart("lifetime", "2026-11-24"), undefined)
  })

  it("sums the window's spend, with BYOK only when the budgets count it", () => {
    const activity = [row("2026-10-31", 8, 0), row("2026-11-16", 4, 1), row("2026-11-23", 2, 1), row("2026-11-24", 1, 1)]
    const spent = (interval: BudgetWindows.Interval, includeByok: boolean) =>
      BudgetWindows.spentIn(interval, { today: "2026-11-24", activity, includeByok, lifetimeUsage: 50 })
    assert.strictEqual(spent("daily", false), 1)
    assert.strictEqual(spent("weekly", false), 3)
    assert.strictEqual(spent("monthly", false), 7)
    assert.strictEqual(spent("monthly", true), 10)
    assert.strictEqual(spent("lifetime", false), 50)
  })
})
