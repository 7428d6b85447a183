import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Http from "node:http"
import OpenAI from "openai"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"
import { storeKind } from "../support/TestServer.ts"
import { endpoint, type Gateway, provider, type Reply, startGateway } from "./Gateway.ts"
import { heldAt } from "../support/HeldMemory.ts"

// Issue #50, as its own table set it up: one OpenAI-compatible provider at 1,536 float
// dimensions that takes 2,048 inputs a call, and the budget of a 512 MB container (160 MiB).
// A piece holds at most 8 MiB: 2 × (1,536 × 22 + 64) = 67,712 bytes an input, 123 inputs a piece.
const perPiece = 123
const model = "acme/embed"
const inputs = (from: number, n: number) => Array.from({ length: n }, (_, i) => `document ${from + i} of the large answer`)
const tokensOf = (texts: ReadonlyArray<string>) => texts.reduce((n, text) => n + FakeUpstream.wordCount(text), 0)

const config = (url: string, cache: boolean) => ({
  providers: [
    provider("alpha", url, {}, [
      endpoint(model, { upstream_model: "text-embedding-3-small", dimensions: 1536, max_batch_items: 2048, pricing: { prompt: "0.02" } })
    ])
  ],
  // Read, the cache makes an answer whole: the same request with `x-switchyard-cache: bypass` is
  // written piece by piece, so both ways are compared on one gateway.
  workspaces: { default: { cache } }
})

const sentInputs = (requests: ReadonlyArray<FakeUpstream.RecordedRequest>) => requests.map((r) => (r.body as { input: Array<string> }).input)

const generation = async (gateway: Gateway, id: string) => {
  let reply = await gateway.call(`/generation?id=${id}`)
  for (const deadline = Date.now() + 10_000; reply.status === 404 && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 50))
    reply = await gateway.call(`/generation?id=${id}`)
  }
  assert.strictEqual(reply.status, 200, reply.text)
  return reply.json.data
}

const keyUsage = async (gateway: Gateway): Promise<number> => (await gateway.call("/key")).json.data.usage

const heldBytes = (gateway: Gateway) => heldAt(gateway.server.origin)

describe(`a large embeddings answer, written as its pieces return (${storeKind})`, () => {
  let upstream: FakeUpstream.FakeServer
  let gateway: Gateway
  // One piece at a time: which upstream call fails or stalls is the test's to choose.
  let serial: Gateway
  beforeAll(async () => {
    upstream = await FakeOpenAi.start()
    gateway = await startGateway({ config: config(upstream.url, true), credits: 100, env: { SWITCHYARD_MEMORY_BUDGET_MB: "160" } })
    serial = await startGateway({
      config: config(upstream.url, false),
      credits: 100,
      env: { SWITCHYARD_MEMORY_BUDGET_MB: "160", SWITCHYARD_BATCH_CONCURRENCY: "1" }
    })
  })
  afterAll(async () => {
    await gateway.close()
    await serial.close()
    await upstream.close()
  })

  it("answers 2,000 inputs in pieces of 123, with the bytes, usage and ledger row of the same request answered whole", async () => {
    const input = inputs(0, 2000)
    const mark = upstream.requests.length
    const streamed = await gateway.embed({ model, input }, { headers: { "x-switchyard-cache": "bypass" } })
    assert.strictEqual(streamed.status, 200, streamed.text.slice(0, 300))
    assert.strictEqual(streamed.headers.get("content-length"), null, "written as it is made, its length unknown")
    assert.strictEqual(streamed.headers.get("x-switchyard-cache"), "bypass")
    const pieces = sentInputs(upstream.requests.slice(mark))
    assert.strictEqual(pieces.length, Math.ceil(2000 / perPiece))
    assert.isTrue(pieces.every((piece) => piece.length <= perPiece))
    assert.deepStrictEqual(pieces.flat().sort(), [...input].sort())

    const wholeMark = upstream.requests.length
    const whole: Reply = await gateway.embed({ model, input })
    assert.strictEqual(whole.status, 200, whole.text.slice(0, 300))
    assert.strictEqual(Number(whole.headers.get("content-length")), Buffer.byteLength(whole.text))
    assert.strictEqual(upstream.requests.length - wholeMark, 1, "answered whole: one upstream call of 2,000 inputs")

    // Byte for byte, but for the generation id.
    assert.strictEqual(streamed.text.replaceAll(streamed.json.id, "ID"), whole.text.replaceAll(whole.json.id, "ID"))
    assert.strictEqual(streamed.json.data.length, 2000)
    assert.strictEqual(streamed.json.usage.prompt_tokens, tokensOf(input))
    const [a, b] = [await generation(gateway, streamed.json.id), await generation(gateway, whole.json.id)]
    for (const field of ["tokens_prompt", "native_tokens_prompt", "total_cost", "usage", "provider_name", "model"]) {
      assert.deepStrictEqual(a[field], b[field], field)
    }
    assert.isAbove(a.total_cost, 0)
  })

  it("writes its access line once the body is written, with the tokens and cost settled at its end", async () => {
    const logged = await startGateway({
      config: config(upstream.url, false),
      credits: 100,
      env: { SWITCHYARD_MEMORY_BUDGET_MB: "160", SWITCHYARD_LOG_FORMAT: "json", SWITCHYARD_LOG_LEVEL: "info" }
    })
    try {
      const { lines, result: reply } = await capturingStdout(() => logged.embed({ model, input: inputs(40_000, 300) }))
      assert.strictEqual(reply.status, 200)
      assert.strictEqual(reply.headers.get("content-length"), null, "written in pieces")
      const line = lines.find((l) => l.message === "request" && l.generation_id === reply.json.id)
      assert.isDefined(line, JSON.stringify(lines.filter((l) => l.message === "request")))
      assert.deepInclude(line, {
        status: 200,
        task: "embeddings",
        provider: "alpha",
        cache: "bypass",
        tokens: reply.json.usage.total_tokens,
        cost: reply.json.usage.cost
      })
    } finally {
      await logged.close()
    }
  })

  it("gives the openai SDK's default request (base64) of 2,000 inputs, written in pieces, every vector", async () => {
    const client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const input = inputs(30_000, 2000)
    const mark = upstream.requests.length
    const response = await client.embeddings.create({ model, input }, { headers: { "x-switchyard-cache": "bypass" } })
    // base64 holds 2 × (1,536 × 16/3 + 64) = 16,512 bytes an input: 508 a piece, 4 pieces.
    assert.strictEqual(upstream.requests.length - mark, 4)
    assert.strictEqual(response.data.length, 2000)
    assert.isTrue(response.data.every((d, i) => d.index === i && d.embedding.length === 1536))
    assert.strictEqual(response.usage.prompt_tokens, tokensOf(input))
  })

  it("ends an answer whose piece fails midway with the error object in place of usage, and charges the pieces answered", async () => {
    const input = inputs(10_000, 2000)
    const before = await keyUsage(serial)
    const mark = upstream.requests.length
    upstream.setBehaviour([FakeUpstream.normal, FakeUpstream.normal, { _tag: "Status", status: 400 }])
    const reply = await serial.embed({ model, input })
    assert.strictEqual(reply.status, 200, "the status went with the first piece")
    assert.strictEqual(reply.json.object, "list")
    assert.strictEqual(reply.json.data.length, 2 * perPiece)
    assert.deepStrictEqual(reply.json.data.map((d: { index: number }) => d.index), input.slice(0, 2 * perPiece).map((_, i) => i))
    assert.strictEqual(reply.json.usage, undefined)
    assert.strictEqual(reply.json.error.code, 400)
    assert.match(reply.json.error.message, /alpha/u)
    assert.strictEqual(upstream.requests.length - mark, 3, "no piece is sent after the failure")

    const id = reply.headers.get("x-generation-id")!
    const row = await generation(serial, id)
    assert.strictEqual(row.tokens_prompt, tokensOf(input.slice(0, 2 * perPiece)), "the two pieces the upstream answered")
    // Charged once, that much, and the rest of the hold released.
    assert.closeTo((await keyUsage(serial)) - before, row.total_cost, 1e-12)
  })

  it("charges a client that disconnects midway the pieces answered before it went, and releases its memory", async () => {
    const input = inputs(20_000, 2000)
    let release = () => {}
    const stalled = new Promise<void>((resolve) => (release = resolve))
    upstream.setBehaviour([FakeUpstream.normal, { _tag: "Held", until: stalled }])
    const url = new URL(serial.server.origin)
    const body = JSON.stringify({ model, input })
    const id = await new Promise<string>((resolve, reject) => {
      const request = Http.request({
        host: url.hostname,
        port: Number(url.port),
        path: "/api/v1/embeddings",
        method: "POST",
        headers: { authorization: `Bearer ${serial.server.apiKey}`, "content-type": "application/json", "content-length": Buffer.byteLength(body) }
      }, (response) => {
        response.once("data", () => {
          // Gone after the first piece, while the second is in flight.
          request.destroy()
          resolve(String(response.headers["x-generation-id"]))
        })
      })
      request.on("error", (error) => (error.message.includes("socket hang up") || error.message.includes("aborted") ? undefined : reject(error)))
      request.end(body)
    })
    const row = await generation(serial, id)
    release()
    assert.strictEqual(row.tokens_prompt, tokensOf(input.slice(0, perPiece)), "the first piece only")
    let held = await heldBytes(serial)
    for (const deadline = Date.now() + 10_000; held !== 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 20))
      held = await heldBytes(serial)
    }
    assert.strictEqual(held, 0)
  })

  it("counts a piece that fails midway against its endpoint, as a failed attempt is", async () => {
    const endpointStatus = async () => {
      const reply = await serial.call("/models/acme/embed/endpoints")
      assert.strictEqual(reply.status, 200, reply.text)
      return reply.json.data.endpoints.find((e: { provider: string }) => e.provider === "alpha").status
    }
    assert.strictEqual(await endpointStatus(), 0)
    upstream.setBehaviour([FakeUpstream.normal, { _tag: "Status", status: 500 }])
    const reply = await serial.embed({ model, input: inputs(50_000, 2000) })
    assert.strictEqual(reply.status, 200)
    assert.strictEqual(reply.json.data.length, perPiece)
    assert.isAbove(reply.json.error.code, 499)
    // Only the first piece's attempt went through the route's fallbacks; the failure of the second
    // still opens the endpoint's outage window.
    assert.strictEqual(await endpointStatus(), -1)
  })
})
