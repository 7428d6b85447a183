import { assert, describe, it } from "vitest"
import * as Credits from "../src/Credits.ts"

describe("Credits", () => {
  it("shows the balance of a workspace with prepaid credits", () => {
    assert.deepStrictEqual(Credits.left({ total_credits: 25, total_usage: 0.5 }), { value: "$24.50", hint: "of $25.00 added" })
    assert.match(Credits.withoutBudgets({ total_credits: 25, total_usage: 0.5 }), /until its credits run out/)
  })

  it("never shows a negative balance of credits that are off", () => {
    const off = { total_credits: 0, total_usage: 0.000005 }
    assert.deepStrictEqual(Credits.left(off).value, "off")
    assert.notMatch(Credits.left(off).hint, /added/)
    assert.notMatch(Credits.withoutBudgets(off), /credits run out/)
  })
})
