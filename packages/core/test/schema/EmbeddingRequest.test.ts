import { assert, describe, it } from "@effect/vitest"
import { CreateEmbeddingsRequestBody$outboundSchema } from "@openrouter/sdk/models/operations"
import { Effect, Exit, Schema } from "effect"
import * as fc from "fast-check"
import { isDeepStrictEqual } from "node:util"
import * as DecodeIssue from "../../src/schema/DecodeIssue.ts"
import {
  decode,
  EmbeddingRequest,
  inputCount,
  inputModalities,
  sentParameters
} from "../../src/schema/EmbeddingRequest.ts"
import { embeddingRequest } from "./arbitraries.ts"

const decodeExit = Schema.decodeUnknownExit(EmbeddingRequest)

const issuesOf = (u: unknown): ReadonlyArray<DecodeIssue.DecodeIssue> => {
  const exit = Schema.decodeUnknownExit(EmbeddingRequest)(u, { errors: "all" })
  if (Exit.isSuccess(exit)) return []
  const error = exit.cause.reasons.find((r) => r._tag === "Fail")
  return error?._tag === "Fail" ? DecodeIssue.fromSchemaError(error.error) : []
}

type Body = Record<string, unknown>

const violations: ReadonlyArray<readonly [field: string, mutate: (b: Body) => Body]> = [
  ["input", (b) => ({ ...b, input: "" })],
  ["input", (b) => ({ ...b, input: [] })],
  ["input", (b) => ({ ...b, input: 3 })],
  ["input", (b) => ({ ...b, input: null })],
  ["input[1]", (b) => ({ ...b, input: ["a", ""] })],
  ["input[1]", (b) => ({ ...b, input: [1, -1] })],
  ["input[0]", (b) => ({ ...b, input: [1.5] })],
  ["input[1]", (b) => ({ ...b, input: [[1], []] })],
  ["input[1]", (b) => ({ ...b, input: ["a", 1] })],
  ["input[0].content", (b) => ({ ...b, input: [{ content: [] }] })],
  ["input[0].content[0].text", (b) => ({ ...b, input: [{ content: [{ type: "text", text: "" }] }] })],
  ["input[0].content[0]", (b) => ({ ...b, input: [{ content: [{ type: "audio" }] }] })],
  ["input[0].content[0].image_url.url", (b) => ({ ...b, input: [{ content: [{ type: "image_url", image_url: {} }] }] })],
  ["input[0].content[0].input_file.data", (b) => ({ ...b, input: [{ content: [{ type: "input_file", input_file: {} }] }] })],
  ["input", ({ input: _, ...b }) => b],
  ["model", ({ model: _, ...b }) => b],
  ["model", (b) => ({ ...b, model: "" })],
  ["model", (b) => ({ ...b, model: "openai/" })],
  ["model", (b) => ({ ...b, model: "text embedding" })],
  ["model", (b) => ({ ...b, model: 5 })],
  ["dimensions", (b) => ({ ...b, dimensions: 0 })],
  ["dimensions", (b) => ({ ...b, dimensions: 1.5 })],
  ["dimensions", (b) => ({ ...b, dimensions: "8" })],
  ["encoding_format", (b) => ({ ...b, encoding_format: "hex" })],
  ["input_type", (b) => ({ ...b, input_type: 5 })],
  ["session_id", (b) => ({ ...b, session_id: "x".repeat(257) })],
  ["trace.trace_id", (b) => ({ ...b, trace: { trace_id: 1 } })],
  ["trace", (b) => ({ ...b, trace: "t" })],
  ["user", (b) => ({ ...b, user: 7 })],
  ["provider.colour", (b) => ({ ...b, provider: { colour: "red" } })],
  ["provider.max_price.promt", (b) => ({ ...b, provider: { max_price: { promt: "1" } } })],
  ["provider.max_price.prompt", (b) => ({ ...b, provider: { max_price: { prompt: -1 } } })],
  ["provider.max_price.prompt", (b) => ({ ...b, provider: { max_price: { prompt: "NaN" } } })],
  ["provider.sort", (b) => ({ ...b, provider: { sort: "cheapest" } })],
  ["provider.sort.partition", (b) => ({ ...b, provider: { sort: { by: "price", partition: "all" } } })],
  ["provider.quantizations[0]", (b) => ({ ...b, provider: { quantizations: ["fp9"] } })],
  ["provider.order", (b) => ({ ...b, provider: { order: "openai" } })],
  ["provider.data_collection", (b) => ({ ...b, provider: { data_collection: "maybe" } })],
  ["provider.preferred_max_latency.p95", (b) => ({ ...b, provider: { preferred_max_latency: { p95: 1 } } })],
  ["provider.preferred_min_throughput", (b) => ({ ...b, provider: { preferred_min_throughput: -1 } })]
]

describe("EmbeddingRequest", () => {
  it("decodes every valid body", () => {
    fc.assert(fc.property(embeddingRequest, (body) => Exit.isSuccess(decodeExit(body))), { numRuns: 300 })
  })

  it("encodes every decoded body back into one that decodes to the same value", () => {
    fc.assert(fc.property(embeddingRequest, (generated) => {
      const body = JSON.parse(JSON.stringify(generated))
      const decoded = Schema.decodeUnknownSync(EmbeddingRequest)(body)
      const wire = JSON.parse(JSON.stringify(Schema.encodeSync(EmbeddingRequest)(decoded)))
      return isDeepStrictEqual(Schema.decodeUnknownSync(EmbeddingRequest)(wire), decoded)
    }), { numRuns: 200 })
  })

  it("rejects each single rule violation with an issue naming the field", () => {
    fc.assert(
      fc.property(embeddingRequest, fc.constantFrom(...violations), (body, [field, mutate]) => {
        const issues = issuesOf(mutate({ ...body, provider: null }))
        return issues.length > 0 && issues.every((i) => i.path === field)
      }),
      { numRuns: 400 }
    )
  })

  it("refuses a provider object with an unknown key by naming the key", () => {
    const [issue] = issuesOf({ input: "x", model: "a/b", provider: { only: ["openai"], max_prise: "1" } })
    assert.strictEqual(issue?.path, "provider.max_prise")
    assert.include(issue?.message, "unknown property")
    assert.include(issue?.message, "max_price")
  })

  it("ignores unknown top-level keys", () => {
    const exit = decodeExit({ input: "x", model: "a/b", stream: true, extra_body: { a: 1 } })
    assert.isTrue(Exit.isSuccess(exit))
    if (Exit.isSuccess(exit)) assert.deepStrictEqual(exit.value, { input: "x", model: "a/b" })
  })

  it.effect("refuses a max_price number with a 400 naming the field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decode({ input: "x", model: "a/b", provider: { max_price: { prompt: 0.05, image: "2" } } }))
      assert.strictEqual(error._tag, "BadRequest")
      assert.include(error.message, "provider.max_price.prompt")
      assert.deepStrictEqual((error.metadata as { issues: ReadonlyArray<{ path: string }> }).issues.map((i) => i.path), ["provider.max_price.prompt"])
    }))

  it.effect("decode answers a 400 whose message names every broken field", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(decode({ input: [], dimensions: 0 }))
      assert.strictEqual(error._tag, "BadRequest")
      assert.include(error.message, "input:")
      assert.include(error.message, "model: Missing key")
      assert.include(error.message, "dimensions:")
      const issues = error.metadata?.issues as ReadonlyArray<DecodeIssue.DecodeIssue>
      assert.deepStrictEqual(issues.map((i) => i.path).sort(), ["dimensions", "input", "model"])
    }))

  it("accepts every body the official SDK sends", () => {
    const bodies = [
      { model: "openai/text-embedding-3-small", input: "hello" },
      { model: "openai/text-embedding-3-small", input: ["a", "b"], dimensions: 256, encodingFormat: "base64" as const },
      { model: "openai/text-embedding-3-small", input: [1, 2, 3], user: "u1", sessionId: "s1" },
      { model: "openai/text-embedding-3-small", input: [[1, 2], [3]], inputType: "search_query" },
      {
        model: "cohere/embed-v4.0",
        input: [{ content: [{ type: "text" as const, text: "a cat" }, { type: "image_url" as const, imageUrl: { url: "data:image/png;base64,AAAA" } }] }]
      },
      {
        model: "baai/bge-m3",
        input: "x",
        provider: {
          allowFallbacks: false,
          dataCollection: "deny",
          enforceDistillableText: true,
          ignore: ["together"],
          only: ["deepinfra", "fireworks"],
          order: ["deepinfra/fp8", "fireworks"],
          maxPrice: { prompt: "0.05", request: "0" },
          preferredMaxLatency: { p50: 1, p90: null },
          preferredMinThroughput: 100,
          quantizations: ["fp8", "fp16"],
          requireParameters: true,
          sort: { by: "latency", partition: "none" },
          zdr: true
        },
        trace: { traceId: "t-1", spanName: "embed", additionalProperties: { team: "search", tags: ["a"] } }
      }
    ]
    for (const body of bodies) {
      const wire = JSON.parse(JSON.stringify(CreateEmbeddingsRequestBody$outboundSchema.parse(body)))
      assert.deepStrictEqual(issuesOf(wire), [], JSON.stringify(wire))
    }
  })
})

describe("request facts", () => {
  it("reads the input's modalities", () => {
    assert.deepStrictEqual(inputModalities({ input: "a" }), ["text"])
    assert.deepStrictEqual(inputModalities({ input: ["a", "b"] }), ["text"])
    assert.deepStrictEqual(inputModalities({ input: [1, 2] }), ["tokens"])
    assert.deepStrictEqual(inputModalities({ input: [[1], [2]] }), ["tokens"])
    assert.deepStrictEqual(
      inputModalities({
        input: [
          { content: [{ type: "text", text: "a" }, { type: "image_url", image_url: { url: "u" } }] },
          { content: [{ type: "input_audio", input_audio: { data: "d" } }, { type: "text", text: "b" }] }
        ]
      }),
      ["text", "image", "audio"]
    )
  })

  it("counts the vectors asked for", () => {
    assert.strictEqual(inputCount({ input: "a" }), 1)
    assert.strictEqual(inputCount({ input: ["a", "b", "c"] }), 3)
    assert.strictEqual(inputCount({ input: [1, 2, 3] }), 1)
    assert.strictEqual(inputCount({ input: [[1], [2]] }), 2)
    assert.strictEqual(inputCount({ input: [{ content: [{ type: "text", text: "a" }] }] }), 1)
  })

  it("lists the provider parameters actually sent", () => {
    assert.deepStrictEqual(sentParameters({ input: "a", model: "a/b" }), [])
    assert.deepStrictEqual(
      sentParameters({ input: "a", model: "a/b", dimensions: 8, user: "u", session_id: "s", provider: null }),
      ["dimensions", "user"]
    )
  })
})
