import { assert, describe, it } from "@effect/vitest"
import * as Cost from "../../src/catalog/Cost.ts"
import * as Money from "../../src/catalog/Money.ts"
import * as Candidates from "../../src/routing/Candidates.ts"
import { candidatesOf, catalogOf } from "./fixtures.ts"

const catalog = catalogOf([
  { slug: "alpha", model: "acme/one", prompt: "0.01" },
  { slug: "alpha", model: "acme/two", prompt: "0.02", variant: "fp8" },
  { slug: "beta", model: "ACME/One", prompt: "0.03" },
  { slug: "gamma", model: "acme/two", prompt: "0.04" },
  { slug: "gamma", model: "acme/one", prompt: "0.05", variant: "fast" }
])

// What the index must answer: a scan of every endpoint, in catalog order.
const scanned = (model: string, active: (slug: string) => boolean) => {
  const all = candidatesOf(catalog).filter((c) => c.endpoint.model.toLowerCase() === model.toLowerCase())
  return {
    active: all.filter((c) => active(c.provider.slug)).map((c) => c.id),
    inactive: all.filter((c) => !active(c.provider.slug)).map((c) => c.id)
  }
}

describe("Candidates.forModel", () => {
  it("answers as a scan of the catalog would, in catalog order, whatever the case of the model id", () => {
    for (const model of ["acme/one", "ACME/TWO", "acme/none"]) {
      for (const off of [[], ["beta"], ["alpha", "gamma"]]) {
        const active = (slug: string) => !off.includes(slug)
        const set = Candidates.forModel(catalog, model, (p) => active(p.slug))
        assert.deepStrictEqual({ active: set.active.map((c) => c.id), inactive: set.inactive.map((c) => c.id) }, scanned(model, active))
      }
    }
  })

  it("asks whether a provider is active once per call, only for providers serving the model", () => {
    const asked: Array<string> = []
    Candidates.forModel(catalog, "acme/one", (p) => {
      asked.push(p.slug)
      return true
    })
    assert.deepStrictEqual(asked, ["alpha", "beta", "gamma"])
  })
})

describe("Cost.attoPrices", () => {
  it("parses each price of a pricing once, as Money.toAtto does", () => {
    const pricing = catalog.providers[0]!.endpoints[0]!.pricing
    const atto = Cost.attoPrices(pricing)
    assert.strictEqual(Cost.attoPrices(pricing), atto)
    for (const kind of ["prompt", "search", "completion", "request", "image", "audio"] as const) {
      assert.strictEqual(atto[kind], Money.toAtto(pricing[kind]))
    }
  })
})
