import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { onTestFinished } from "vitest"
import * as Net from "node:net"
import OpenAI, { toFile } from "openai"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"
import { heldAt } from "../support/HeldMemory.ts"

const model = "switchyard/local-embed"
const inputs = (n: number) => Array.from({ length: n }, (_, i) => `item ${i}`)

const post = async (server: RunningServer, path: string, body: unknown) => {
  const response = await fetch(`${server.origin}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() as any }
}

const activity = async (server: RunningServer) => {
  const response = await fetch(`${server.origin}/api/v1/activity`, { headers: { authorization: `Bearer ${server.managementKey}` } })
  assert.strictEqual(response.status, 200)
  return response.json()
}

const heldBytes = (server: RunningServer) => heldAt(server.origin)

/** The memory held by the requests in flight, once it is at least `bytes` (or after 10 s, whatever it is). */
const heldBytesOnceAtLeast = async (server: RunningServer, bytes: number) => {
  let held = await heldBytes(server)
  for (const deadline = Date.now() + 10_000; !(held >= bytes) && Date.now() < deadline;) {
    await new Promise((resolve) => setTimeout(resolve, 20))
    held = await heldBytes(server)
  }
  return held
}

// Issue #50: a request is charged what its answer will hold before any upstream call. With a
// budget of 1 MiB (`SWITCHYARD_MEMORY_BUDGET_MB`), an input of the local model's 256 float
// dimensions holds 2 × (256 × 22 + 64) = 11,392 bytes: 92 inputs fit the budget, 200 never do;
// the same 200 in base64 (2 × (1,366 + 64) bytes each) do. A request that reads no cache is
// written piece by piece and charged only the pieces it holds at once (`embeddings/Streamed.ts`).
describe(`admission by the answer a request will hold (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_MEMORY_BUDGET_MB: "1", SWITCHYARD_BODY_TIMEOUT_MS: "3000", SWITCHYARD_BATCH_POLL_MS: "100" } })
  })
  afterAll(async () => {
    await server.close()
  })

  it("writes a request that reads no cache piece by piece, charged one window of pieces: 200 inputs are served in a 1 MiB budget", async () => {
    // 11 inputs a piece (1 MiB / (2 × 4 pieces) / 11,392 bytes), 4 pieces at once: 501,248 bytes.
    const served = await post(server, "/api/v1/embeddings", { model, input: inputs(200) })
    assert.strictEqual(served.status, 200, JSON.stringify(served.body).slice(0, 300))
    assert.strictEqual(served.body.data.length, 200)
    assert.deepStrictEqual(served.body.data.map((d: { index: number }) => d.index), inputs(200).map((_, i) => i))
  })

  it("refuses an answer made whole (the workspace reads the cache) larger than the whole budget with a 413 naming the budget and the split, and charges nothing", async () => {
    const cache = async (on: boolean) => {
      const response = await fetch(`${server.baseUrl}/workspaces/default`, {
        method: "PATCH",
        headers: { authorization: `Bearer ${server.managementKey}`, "content-type": "application/json" },
        body: JSON.stringify({ cache: on })
      })
      assert.strictEqual(response.status, 200, await response.text())
    }
    await cache(true)
    onTestFinished(() => cache(false))
    const before = await activity(server)
    const refused = await post(server, "/api/v1/embeddings", { model, input: inputs(200) })
    assert.strictEqual(refused.status, 413, JSON.stringify(refused.body))
    assert.strictEqual(refused.body.error.code, 413)
    assert.match(refused.body.error.message, /200 inputs × 256 dimensions as float JSON/u)
    assert.match(refused.body.error.message, /more than the 1 MiB this gateway may hold/u)
    assert.match(refused.body.error.message, /at most 92 inputs/u)
    assert.deepStrictEqual(refused.body.error.metadata, {
      reason: "answer_too_large",
      answer_bytes: 200 * 11_392,
      budget_bytes: 1024 * 1024,
      max_inputs: 92
    })
    assert.deepStrictEqual(await activity(server), before)
    // What fits is served: fewer inputs, fewer dimensions, or base64.
    assert.strictEqual((await post(server, "/api/v1/embeddings", { model, input: inputs(92) })).status, 200)
    assert.strictEqual((await post(server, "/api/v1/embeddings", { model, input: inputs(200), dimensions: 64 })).status, 200)
    const base64 = await post(server, "/api/v1/embeddings", { model, input: inputs(200), encoding_format: "base64" })
    assert.strictEqual(base64.status, 200)
    assert.strictEqual(base64.body.data.length, 200)
  })

  it("refuses a rerank whose documents echoed back exceed the budget with a 413, and serves it without them", async () => {
    const documents = Array.from({ length: 20 }, (_, i) => `${i} `.padEnd(60_000, "x"))
    const refused = await post(server, "/api/v1/rerank", { model: "switchyard/local-rerank", query: "x", documents })
    assert.strictEqual(refused.status, 413, JSON.stringify(refused.body).slice(0, 300))
    assert.match(refused.body.error.message, /20 documents returned with their text/u)
    assert.strictEqual(refused.body.error.metadata.reason, "answer_too_large")
    const served = await post(server, "/api/v1/rerank", { model: "switchyard/local-rerank", query: "x", documents, return_documents: false })
    assert.strictEqual(served.status, 200, JSON.stringify(served.body).slice(0, 300))
  })

  it("answers 503 with Retry-After while the memory held by others leaves no room, and serves the request once it is released", async () => {
    // A request whose 200 kB body never comes holds three times it: 600 kB of the 1 MiB.
    const url = new URL(server.origin)
    const socket = Net.connect(Number(url.port), url.hostname)
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()))
    socket.write(
      `POST /api/v1/embeddings HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
        `Content-Type: application/json\r\nContent-Length: 200000\r\n\r\n{"model": "${model}", "input": "`
    )
    socket.on("error", () => {})
    const ended = new Promise<string>((resolve) => {
      let text = ""
      socket.on("data", (chunk) => (text += chunk.toString("latin1")))
      socket.once("close", () => resolve(text))
    })
    // The gateway has taken its charge once /metrics shows it held (nothing else is in flight).
    assert.strictEqual(await heldBytesOnceAtLeast(server, 600_000), 600_000)
    // 50 inputs hold 569,600 bytes: beside the 600 kB held they do not fit, alone they do.
    const busy = await post(server, "/api/v1/embeddings", { model, input: inputs(50) })
    assert.strictEqual(busy.status, 503, JSON.stringify(busy.body).slice(0, 300))
    assert.strictEqual(busy.retryAfter, "1")
    assert.strictEqual(busy.body.error.code, 503)
    assert.deepStrictEqual(busy.body.error.metadata, { reason: "memory_busy", retryable: true, retry_after: 1 })
    // The body never comes: the body deadline answers 408 and releases its charge.
    assert.match(await ended, /^HTTP\/1.1 408/u)
    let served = await post(server, "/api/v1/embeddings", { model, input: inputs(50) })
    for (let i = 0; i < 50 && served.status === 503; i++) served = await post(server, "/api/v1/embeddings", { model, input: inputs(50) })
    assert.strictEqual(served.status, 200, JSON.stringify(served.body).slice(0, 300))
  })

  it("fails a batch line whose answer could never fit with the 413 in the error file; the lines that fit are served", async () => {
    const client = new OpenAI({ apiKey: server.apiKey, baseURL: server.baseUrl, maxRetries: 0 })
    const line = (customId: string, n: number) =>
      JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/embeddings", body: { model, input: inputs(n) } })
    const input = [line("fits", 50), line("never", 200), line("small", 2)].join("\n")
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "admission.jsonl"), purpose: "batch" })
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    let batch = await client.batches.retrieve(created.id)
    for (const deadline = Date.now() + 30_000; !["completed", "failed"].includes(batch.status) && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      batch = await client.batches.retrieve(created.id)
    }
    assert.strictEqual(batch.status, "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 3, completed: 2, failed: 1 })
    const lines = (text: string) => text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))
    const errors = lines(await (await client.files.content(batch.error_file_id!)).text())
    assert.strictEqual(errors[0].custom_id, "never")
    assert.strictEqual(errors[0].error.code, 413)
    assert.match(errors[0].error.message, /at most 92 inputs/u)
    const output = lines(await (await client.files.content(batch.output_file_id!)).text())
    assert.deepStrictEqual(output.map((o) => [o.custom_id, o.response.body.data.length]).sort(), [["fits", 50], ["small", 2]])
  })
})
