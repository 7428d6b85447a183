import { assert, describe, it } from "@effect/vitest"
import * as Output from "../src/Output.ts"

describe("Output", () => {
  it("aligns columns, right-aligning numbers", () => {
    const rendered = Output.renderTable(
      [{ header: "NAME", value: (r: { n: string; v: number }) => r.n }, { header: "USAGE", value: (r) => Output.money(r.v), align: "right" }],
      [{ n: "a", v: 12.5 }, { n: "longer name", v: 0.0000012 }]
    )
    assert.strictEqual(rendered, ["NAME              USAGE", "a                $12.50", "longer name  $0.0000012"].join("\n"))
  })

  it("shows money in dollars with the digits that matter", () => {
    assert.deepStrictEqual([0, 1, 0.5, 0.02, 0.000123, 1234.5].map(Output.money), ["$0.00", "$1.00", "$0.50", "$0.02", "$0.000123", "$1234.50"])
    assert.strictEqual(Output.money(null), "-")
  })
})
