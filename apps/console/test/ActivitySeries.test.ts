import type { ActivityItem } from "@switchyard/core/schema/Activity"
import { assert, describe, it } from "vitest"
import * as ActivitySeries from "../src/ActivitySeries.ts"

const row = (date: string, model: string, provider: string, usage: number, requests: number): ActivityItem => ({
  date,
  model,
  model_permaslug: model,
  endpoint_id: `${provider}@${model}`,
  provider_name: provider,
  usage,
  byok_usage_inference: 0,
  requests,
  prompt_tokens: requests * 10,
  completion_tokens: 0,
  reasoning_tokens: 0
})

describe("ActivitySeries", () => {
  it("lists every day of the range, oldest first, across a month boundary", () => {
    assert.deepStrictEqual(ActivitySeries.dayRange("2026-03-02", 4), ["2026-02-27", "2026-02-28", "2026-03-01", "2026-03-02"])
  })

  it("sums a measure per day and group, with zeros on quiet days and nothing outside the range", () => {
    const rows = [
      row("2026-03-01", "acme/embed", "Alpha", 0.5, 5),
      row("2026-03-01", "acme/embed", "Beta", 0.25, 2),
      row("2026-03-02", "acme/large", "Alpha", 1, 1),
      row("2026-02-01", "acme/embed", "Alpha", 100, 100)
    ]
    const series = ActivitySeries.byDay(rows, { today: "2026-03-02", days: 3, measure: "requests", groupOf: (r) => r.provider_name })
    assert.deepStrictEqual(series.series, ["Alpha", "Beta"])
    assert.deepStrictEqual(series.data, [
      { date: "2026-02-28", Alpha: 0, Beta: 0 },
      { date: "2026-03-01", Alpha: 5, Beta: 2 },
      { date: "2026-03-02", Alpha: 1, Beta: 0 }
    ])
  })

  it("keeps the largest groups and sums the rest into other", () => {
    const rows = ["a", "b", "c", "d"].map((model, i) => row("2026-03-02", model, "p", i + 1, 1))
    const series = ActivitySeries.byDay(rows, { today: "2026-03-02", days: 1, measure: "usage", groupOf: (r) => r.model, keep: 3 })
    assert.deepStrictEqual(series.series, ["d", "c", "other"])
    assert.deepStrictEqual(series.data, [{ date: "2026-03-02", d: 4, c: 3, other: 3 }])
  })

  it("totals a measure from a day on", () => {
    const rows = [row("2026-03-01", "m", "p", 1, 3), row("2026-03-02", "m", "p", 2, 4)]
    assert.strictEqual(ActivitySeries.total(rows, "requests"), 7)
    assert.strictEqual(ActivitySeries.total(rows, "usage", "2026-03-02"), 2)
  })
})
