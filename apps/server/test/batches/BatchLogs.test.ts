import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import OpenAI, { toFile } from "openai"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"

// A batch logs as a batch: one info line when it starts, one when it ends with its counts, cost,
// duration and failures by status; each line and unit only at debug.
describe("a batch's log lines", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    gateway = await startGateway({
      config: { providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })])] },
      credits: 10,
      env: { SWITCHYARD_BATCH_POLL_MS: "50", SWITCHYARD_LOG_LEVEL: "info", SWITCHYARD_LOG_FORMAT: "json" }
    })
  })
  afterAll(async () => {
    await gateway?.close()
    await alpha?.close()
  })

  it("5,000 lines with failures: at most 25 info lines besides the HTTP access lines, the last one summing it up", async () => {
    const client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const lines = Array.from({ length: 5_000 }, (_, i) =>
      JSON.stringify({
        custom_id: `l${i}`,
        method: "POST",
        url: "/v1/embeddings",
        // One line in a hundred names a model nobody serves: a 404 error line.
        body: { model: i % 100 === 7 ? "acme/nobody" : "acme/embed", input: `line ${i % 50}` }
      })
    )
    const { lines: logged, result: batch } = await capturingStdout(async () => {
      const file = await client.files.create({ file: await toFile(Buffer.from(lines.join("\n")), "big.jsonl"), purpose: "batch" })
      const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
      const deadline = Date.now() + 120_000
      for (;;) {
        const seen = await client.batches.retrieve(created.id)
        if (seen.status === "completed" || Date.now() > deadline) return seen
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
    })
    assert.strictEqual(batch.status, "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 5_000, completed: 4_950, failed: 50 })
    const info = logged.filter((l) => l.level === "info" && l.message !== "request")
    assert.isAtMost(info.length, 25, JSON.stringify(info.map((l) => l.message)))
    assert.strictEqual(logged.filter((l) => l.message === "batch line").length, 0, "each line only at debug")
    const started = info.find((l) => l.message === "batch started" && l.batch_id === batch.id)
    assert.deepInclude(started, { lines: 5_000 })
    const finished = info.find((l) => l.message === "batch finished" && l.batch_id === batch.id)
    assert.deepInclude(finished, { status: "completed", lines: 5_000, served: 4_950, failed: 50, failures: { "404": 50 } })
    assert.strictEqual(finished.cost, (batch as unknown as { cost: number }).cost)
    assert.isAbove(finished.duration_ms, 0)
  }, 180_000)
})
