import { assert, describe, it } from "@effect/vitest"
import * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import type { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as Answer from "../../src/embeddings/Answer.ts"
import type { Served } from "../../src/embeddings/Settlement.ts"
import { ForwardedVector } from "../../src/providers/VectorEncoding.ts"
import { catalogOf, model } from "../../../../packages/core/test/routing/fixtures.ts"

const plan = Effect.runSync(RoutePlan.plan({
  catalog: catalogOf([{ slug: "alpha", prompt: "0.01" }, { slug: "beta", prompt: "0.02" }]),
  model,
  isActive: () => true,
  now: 0,
  seed: 7
}))

// A vector as an adapter hands it back: plain numbers, or still in the upstream's own bytes.
const vector = fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 8 }).chain((numbers) =>
  fc.boolean().map((forwarded) =>
    forwarded
      ? new ForwardedVector(Buffer.from(JSON.stringify(numbers), "latin1"), numbers.length, "float")
      : numbers
  )
)

const served = fc.record({
  data: fc.array(vector, { minLength: 1, maxLength: 4 }),
  costNanos: fc.bigInt({ min: 0n, max: 10n ** 12n }),
  cachedItems: fc.nat({ max: 3 }),
  dimensions: fc.option(fc.integer({ min: 1, max: 8 }), { nil: undefined })
}).map(({ data, costNanos, cachedItems, dimensions }): { served: Served; request: EmbeddingRequest } => ({
  served: {
    id: "gen-0123456789",
    model,
    provider: plan.attempts[0]!.provider.slug,
    endpoint: plan.attempts[0]!.id,
    data: data.map((embedding, index) => ({ index, embedding })),
    encoding: "float",
    dimensions: 8,
    promptTokens: 12,
    totalTokens: 12,
    modalityTokens: undefined,
    costNanos,
    upstreamCostAtto: costNanos * 1_000_000_000n,
    isByok: false,
    plan,
    attempts: [],
    vectorSpaceChange: undefined,
    cache: { outcome: cachedItems > 0 ? "partial" : "miss", items: cachedItems, tokens: cachedItems * 3, bytes: 0 }
  },
  // `dimensions` is a parameter the fixture's endpoints do not take: the answer names it as ignored.
  request: { model, input: "naïve café", ...(dimensions === undefined ? {} : { dimensions }) }
}))

describe("an embeddings answer", () => {
  it("as text (a batch's output line) is the live body's bytes, whatever its vectors, cache and explanation", () => {
    fc.assert(
      fc.property(served, fc.boolean(), ({ request, served }, explain) => {
        const body = Buffer.from(Answer.body(served, request, explain))
        const text = Answer.text(served, request, explain)
        assert.strictEqual(Buffer.from(text, "utf8").toString("hex"), body.toString("hex"))
        // And it is the JSON the live route answers.
        assert.strictEqual(JSON.parse(text).data.length, served.data.length)
      }),
      { numRuns: 300 }
    )
  })
})
