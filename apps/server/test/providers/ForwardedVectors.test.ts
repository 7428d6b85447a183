import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fc from "fast-check"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as OpenAiCompatible from "../../src/providers/OpenAiCompatible.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import { connection, httpClient, request, texts } from "./ProviderHarness.ts"

const locate = (text: string) => VectorEncoding.locate(Buffer.from(text, "utf8"))

const slices = (located: VectorEncoding.Located | undefined) =>
  located?.vectors.map((v) => [Buffer.from(v.json).toString("latin1"), v.width, v.encoding])

const floatBody = (vector: string) => `{"data":[{"object":"embedding","index":0,"embedding":${vector}}],"usage":{"prompt_tokens":1}}`

describe("VectorEncoding.locate", () => {
  it("takes out float and base64 vectors and leaves the rest of the document parsed", () => {
    const body = `{"id":"x","data":[{"index":0, "embedding" : [ 0.5 ,-1e-3,2E+2,0 ]},{"index":1,"embedding":"AACAPwAAAEA="}],"usage":null}`
    const located = locate(body)
    assert.deepStrictEqual(slices(located), [["[ 0.5 ,-1e-3,2E+2,0 ]", 4, "float"], ["\"AACAPwAAAEA=\"", 2, "base64"]])
    assert.deepStrictEqual(located?.skeleton, { id: "x", data: [{ index: 0, embedding: 0 }, { index: 1, embedding: 1 }], usage: null })
    assert.isDefined(located)
    assert.deepStrictEqual(located!.vectors[0]!.value(), [0.5, -1e-3, 200, 0])
    assert.strictEqual(located!.vectors[1]!.value(), "AACAPwAAAEA=")
  })

  it("forwards exactly what JSON.parse reads, for any finite floats", () => {
    fc.assert(fc.property(fc.array(fc.double({ noNaN: true, noDefaultInfinity: true }), { minLength: 1, maxLength: 40 }), (vector) => {
      const text = JSON.stringify(vector)
      const located = locate(floatBody(text))
      assert.isDefined(located)
      assert.strictEqual(located!.vectors[0]!.width, vector.length)
      assert.deepStrictEqual(located!.vectors[0]!.value(), JSON.parse(text))
    }))
  })

  it("refuses anything that is not a flat array of JSON numbers", () => {
    for (
      const bad of [
        "[1,,2]",
        "[1,]",
        "[,1]",
        "[01]",
        "[1.]",
        "[.5]",
        "[+1]",
        "[1e]",
        "[1e+]",
        "[--1]",
        "[1 2]",
        "[NaN]",
        "[Infinity]",
        "[-Infinity]",
        "[1e400]",
        "[-1e309]",
        `[${"9".repeat(400)}]`,
        "[\"1\"]",
        "[[1]]",
        "[null]",
        "[1",
        "{\"a\":1}",
        "1"
      ]
    ) {
      assert.isUndefined(locate(floatBody(bad)), bad)
    }
  })

  it("accepts numbers that only underflow or carry large harmless exponents", () => {
    assert.deepStrictEqual(slices(locate(floatBody("[1e-400,-0.0,0e999,1.5E-7]"))), [["[1e-400,-0.0,0e999,1.5E-7]", 4, "float"]])
  })

  it("refuses base64 with a bad alphabet, length, padding, or a NaN or infinite float32", () => {
    const nan = Buffer.from([0, 0, 0xc0, 0x7f]).toString("base64")
    const infinity = Buffer.from([0, 0, 0x80, 0x7f]).toString("base64")
    for (const bad of ["AACAPw=", "AACAPwA", "AAC*PwAA", "AACA", nan, infinity, "AACAPw\\u003d\\u003d", "AACAPw==="]) {
      assert.isUndefined(locate(floatBody(`"${bad}"`)), bad)
    }
    assert.deepStrictEqual(slices(locate(floatBody("\"AACAPw==\""))), [["\"AACAPw==\"", 1, "base64"]])
  })

  it("refuses a body that is not JSON once the vectors are out, or that holds any escape", () => {
    assert.isUndefined(locate(`{"data":[{"embedding":[1]}]`))
    assert.isUndefined(locate(`{"data":[{"embedding":[1]}]} trailing`))
    assert.isUndefined(locate(`{"model":"a\\"embedding\\":[1]","data":[{"embedding":[1]}]}`))
    assert.isUndefined(locate(`{"data":[{"embe\\u0064ding":[1]}]}`))
    assert.isUndefined(locate(`{"data":[{"embedding" [1]}]}`))
  })

  it("takes \"embedding\" as a string value for what it is", () => {
    const located = locate(`{"object":"embedding","data":[{"object": "embedding","embedding":[1]}]}`)
    assert.deepStrictEqual(located?.skeleton, { object: "embedding", data: [{ object: "embedding", embedding: 0 }] })
    assert.isUndefined(locate(`{"data":[{"object":"embedding"embedding":[1]}]}`))
  })

  it("finds no vector in a document without the key", () => {
    assert.deepStrictEqual(locate(`{"data":[]}`), { skeleton: { data: [] }, vectors: [] })
  })
})

describe("OpenAiCompatible.forward", () => {
  const model = "text-embedding-3-small"

  it.live("keeps the upstream's bytes when it answers in the asked encoding, and converts otherwise", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeOpenAi.start({}))
      const provider = yield* OpenAiCompatible.make()
      for (const encodingFormat of ["float", "base64"] as const) {
        const result = yield* provider.forward(connection(server.url, "sk-fake"), request(model, texts("a", "b"), { encodingFormat, dimensions: 6 }))
        for (const [i, e] of result.embeddings.entries()) {
          assert.instanceOf(e.embedding, VectorEncoding.ForwardedVector)
          const vector = FakeUpstream.vectorFor(`${model}|${i === 0 ? "a" : "b"}`, 6)
          const value = (e.embedding as VectorEncoding.ForwardedVector).value()
          if (encodingFormat === "float") assert.deepStrictEqual(value, vector)
          else assert.strictEqual(value, FakeUpstream.float32Base64(vector))
        }
      }
      // Together answers floats only: the client's base64 is made by the gateway.
      const converted = yield* provider.forward(connection(server.url, "sk-fake", "together"), request(model, texts("a"), { encodingFormat: "base64", dimensions: 6 }))
      assert.strictEqual(converted.embeddings[0]!.embedding, FakeUpstream.float32Base64(FakeUpstream.vectorFor(`${model}|a`, 6)))
    }).pipe(Effect.scoped, Effect.provide(httpClient)))

  it.live("reads a body it cannot forward the ordinary way and reports the fault", () =>
    Effect.gen(function*() {
      const server = yield* FakeUpstream.scoped(() => FakeOpenAi.start({}))
      const provider = yield* OpenAiCompatible.make()
      server.setBehaviour({ _tag: "Status", status: 200, body: JSON.stringify({ data: [{ index: 0, embedding: [1, "2"] }] }) })
      const error = yield* Effect.flip(provider.forward(connection(server.url, "sk-fake"), request(model, texts("a"))))
      assert.strictEqual(error.reason._tag, "InvalidResponse")
      server.setBehaviour({ _tag: "Status", status: 200, body: JSON.stringify({ data: [{ index: 0, embedding: [1, 2] }, { index: 0, embedding: [3, 4] }] }) })
      const twice = yield* Effect.flip(provider.forward(connection(server.url, "sk-fake"), request(model, texts("a", "b"))))
      assert.strictEqual(twice.reason._tag, "InvalidResponse")
    }).pipe(Effect.scoped, Effect.provide(httpClient)))
})
