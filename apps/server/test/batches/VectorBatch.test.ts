import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import OpenAI, { toFile } from "openai"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"

const model = "openai/text-embedding-3-small"
const lines = 2000
// Every fifth text is longer than the 8 tokens the endpoint takes: embedded in windows.
const textOf = (i: number) => i % 5 === 0 ? `line ${i} is a longer text of many words that no single window of eight tokens can hold whole` : `line ${i}`
const bodyOf = (i: number) => ({ model, input: textOf(i), dimensions: 64, output_dtype: "binary", truncate: "chunk" })

const waitForStatus = async (client: OpenAI, id: string, timeoutMs = 120_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const batch = await client.batches.retrieve(id)
    if (["completed", "failed", "expired", "cancelled"].includes(batch.status)) return batch
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe("a batch of 2,000 lines with output_dtype binary and truncate chunk", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let client: OpenAI

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [
            endpoint(model, {
              upstream_model: "text-embedding-3-small",
              pricing: { prompt: "0.1" },
              dimensions: 1536,
              max_batch_items: 256,
              max_input_tokens: 8,
              matryoshka: true,
              supported_parameters: ["encoding_format"]
            })
          ])
        ]
      },
      credits: 10,
      env: { SWITCHYARD_BATCH_POLL_MS: "100" }
    })
    client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
  }, 60_000)
  afterAll(async () => {
    await gateway?.close()
    await alpha?.close()
  })

  it("completes exact: every line once, each the vector a live request answers, each charged once", async () => {
    const input = Array.from({ length: lines }, (_, i) => JSON.stringify({ custom_id: `line-${i}`, method: "POST", url: "/v1/embeddings", body: bodyOf(i) })).join("\n")
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "vectors.jsonl"), purpose: "batch" })
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    const batch = await waitForStatus(client, created.id)
    assert.strictEqual(batch.status, "completed")
    assert.deepStrictEqual(batch.request_counts, { total: lines, completed: lines, failed: 0 })
    const upstreamCalls = alpha.requests.length
    const output = (await (await client.files.content(batch.output_file_id!)).text()).split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))
    assert.strictEqual(output.length, lines)
    const byId = new Map(output.map((o) => [o.custom_id as string, o]))
    assert.strictEqual(byId.size, lines)
    for (const [id, o] of byId) {
      assert.strictEqual(o.response.status_code, 200, id)
      const embedding: Array<number> = o.response.body.data[0].embedding
      assert.strictEqual(embedding.length, 8, id)
      assert.isTrue(embedding.every((b) => Number.isInteger(b) && b >= -128 && b <= 127), id)
    }
    // A sample of lines, short and windowed, against the same request made live.
    for (const i of [0, 1, 5, 999, 1000, 1995, 1999]) {
      const live = await gateway.embed(bodyOf(i))
      assert.strictEqual(live.status, 200, live.text)
      assert.deepStrictEqual(byId.get(`line-${i}`).response.body.data[0].embedding, live.json.data[0].embedding, `line ${i}`)
    }
    // The lines' tokens add up to what the upstream counted of every text and window it was sent
    // (a unit run again, after a claim taken over on a busy machine, sends the same call twice).
    const calls = new Set(alpha.requests.slice(0, upstreamCalls).map((r) => JSON.stringify((r.body as { input: Array<string> }).input)))
    const counted = [...calls]
      .flatMap((input) => JSON.parse(input) as Array<string>)
      .reduce((n, text) => n + FakeUpstream.wordCount(text), 0)
    assert.strictEqual(output.reduce((n, o) => n + (o.response.body.usage.prompt_tokens as number), 0), counted)
    // One ledger row a line (and one a live request of the sample), each charged as its usage says.
    const rows = await gateway.server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ readonly generation_id: string }>`SELECT generation_id FROM ledger`
    }))
    const ids = new Set(output.map((o) => o.response.request_id as string))
    assert.strictEqual(ids.size, lines)
    assert.strictEqual(rows.filter((r) => ids.has(r.generation_id)).length, lines)
  }, 180_000)
})
