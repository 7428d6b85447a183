import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Http from "node:http"
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

  // The answer is made only once its ledger row is on disk (an answer iff its row): a client that
  // goes away while it is written is charged the whole request, like one that read every byte.
  it("charges a client that disconnects while the answer is written its whole row", async () => {
    const url = new URL(server.origin)
    const body = JSON.stringify({ model, input: inputs(5000, 2000) })
    const { id, received } = await new Promise<{ readonly id: string; readonly received: number }>((resolve, reject) => {
      const request = Http.request({
        host: url.hostname,
        port: Number(url.port),
        path: "/api/v1/embeddings",
        method: "POST",
        headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
      }, (response) => {
        response.once("data", (chunk: Buffer) => {
          const length = Number(response.headers["content-length"])
          // Gone after the first part, long before the last.
          request.destroy()
          assert.isBelow(chunk.length, length)
          resolve({ id: String(response.headers["x-generation-id"]), received: chunk.length })
        })
      })
      request.on("error", (error) => (error.message.includes("socket hang up") || error.message.includes("aborted") ? undefined : reject(error)))
      request.end(body)
    })
    assert.isAbove(received, 0)
    const generation = await fetch(`${server.origin}/api/v1/generation?id=${id}`, { headers: { authorization: `Bearer ${server.apiKey}` } })
    assert.strictEqual(generation.status, 200)
    const data = ((await generation.json()) as any).data
    assert.strictEqual(data.id, id)
    const whole = await post(server, inputs(5000, 2000))
    assert.strictEqual(data.tokens_prompt, whole.json.usage.prompt_tokens, "the whole request's tokens")
  })
})
