import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

const model = "switchyard/local-embed"
const inputs = (from: number, n: number) => Array.from({ length: n }, (_, i) => `document ${from + i} of the large answer`)

const post = async (server: RunningServer, input: ReadonlyArray<string>) => {
  const response = await fetch(`${server.origin}/api/v1/embeddings`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify({ model, input })
  })
  const bytes = Buffer.from(await response.arrayBuffer())
  return { status: response.status, headers: response.headers, bytes, json: JSON.parse(bytes.toString("utf8")) }
}

// Issue #50: an answer above 1 MiB is written to the socket part by part from the upstream's own
// bytes instead of being joined into one more copy first; its bytes are the same JSON.
describe(`a large embeddings answer, written part by part (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(async () => {
    await server.close()
  })

  it("answers 2,000 inputs with the declared length and the vectors and usage of the same inputs answered 100 at a time", async () => {
    const large = await post(server, inputs(0, 2000))
    assert.strictEqual(large.status, 200)
    assert.isAbove(large.bytes.length, 1024 * 1024, "large enough to be written part by part")
    assert.strictEqual(Number(large.headers.get("content-length")), large.bytes.length)
    assert.strictEqual(large.json.data.length, 2000)
    let promptTokens = 0
    for (let from = 0; from < 2000; from += 100) {
      const small = await post(server, inputs(from, 100))
      assert.strictEqual(small.status, 200)
      assert.isBelow(small.bytes.length, 1024 * 1024, "answered in one write")
      promptTokens += small.json.usage.prompt_tokens
      for (const [i, item] of small.json.data.entries()) {
        assert.deepStrictEqual(large.json.data[from + i], { ...item, index: from + i })
      }
    }
    assert.strictEqual(large.json.usage.prompt_tokens, promptTokens)
    // The same serialisation as the one-write path: items in the same key order, no spaces.
    assert.strictEqual(large.bytes.subarray(0, 60).toString("latin1"), `{"object":"list","data":[{"object":"embedding","embedding":[`)
    assert.strictEqual(large.bytes.toString("utf8"), JSON.stringify(large.json))
  })
})
