import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import OpenAI, { toFile } from "openai"
import * as FakeMistralBatch from "../fakes/FakeMistralBatch.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { costOf, endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import { until } from "../support/BatchGateways.ts"

// Batches whose lines go to Mistral's batch jobs (faked), beside a provider without a batch API:
// lines split by their own preferences, a job that fails or expires finishing its lines live,
// every generation naming its provider and mode, and the files at the provider deleted.

const live = "0.1"
const batchPrice = "0.05"
const plainPrice = "0.2"

const config = (mistralUrl: string, plainUrl: string) => ({
  providers: [
    provider("mistral", mistralUrl, { dialect: "mistral" }, [
      endpoint("acme/embed", { upstream_model: "mistral-embed", pricing: { prompt: live, batch: { prompt: batchPrice } } })
    ]),
    provider("plain", plainUrl, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: plainPrice } })])
  ]
})

const env = { SWITCHYARD_BATCH_POLL_MS: "100", SWITCHYARD_PROVIDER_BATCH_POLL_MS: "150", SWITCHYARD_BATCH_UNIT_LINES: "10" }

const line = (customId: string, input: string, order?: string) =>
  JSON.stringify({
    custom_id: customId,
    method: "POST",
    url: "/v1/embeddings",
    body: {
      model: "acme/embed",
      input,
      ...(order !== undefined ? { provider: { order: [order], allow_fallbacks: false } } : {}),
      // A line of its own when run live (lines that differ only in their input share a call).
      ...(input === "refuse me" ? { user: "refused" } : {})
    }
  })

const jsonLines = (text: string) => text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

/** The inputs a fake was sent live (lines of one batch may share a call). */
const liveInputs = (fake: FakeUpstream.FakeServer) =>
  fake.requests.filter((r) => r.method === "POST" && r.path === "/v1/embeddings")
    .reduce((n, r) => n + (FakeUpstream.isRecord(r.body) && Array.isArray(r.body.input) ? r.body.input.length : 1), 0)

type Batch = OpenAI.Batch & {
  readonly cost: number
  readonly provider_jobs: ReadonlyArray<{ provider: string; job_id: string | null; status: string; lines: number }>
}

describe("provider batches beside live providers (Mistral's batch jobs, faked)", () => {
  let mistral: FakeMistralBatch.FakeMistralBatch
  let plain: FakeUpstream.FakeServer
  let gateway: Gateway
  let client: OpenAI

  beforeAll(async () => {
    mistral = await FakeMistralBatch.start({
      failRequest: (_, body) =>
        FakeUpstream.isRecord(body) && JSON.stringify(body.input) === JSON.stringify(["refuse me"]) ? { status: 400, message: "This input was refused" } : undefined
    })
    plain = await FakeOpenAi.start()
    gateway = await startGateway({ config: config(mistral.url, plain.url), credits: 10, env })
    client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway?.close()
    await mistral?.close()
    await plain?.close()
  })

  const run = async (input: string) => {
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "input.jsonl"), purpose: "batch" })
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    return (await until(() => client.batches.retrieve(created.id), (b) => b.status === "completed" || b.status === "failed", 30_000)) as Batch
  }
  const output = async (batch: OpenAI.Batch) => (batch.output_file_id === null ? [] : jsonLines(await (await client.files.content(batch.output_file_id!)).text()))
  const errors = async (batch: OpenAI.Batch) => (batch.error_file_id === null ? [] : jsonLines(await (await client.files.content(batch.error_file_id!)).text()))
  const generation = async (id: string) => (await gateway.call(`/generation?id=${id}`)).json.data as { provider: string; batch_mode: string | null; usage: number }
  const ledger = () =>
    gateway.server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ readonly generation_id: string; readonly cost_nanos: string | number }>`SELECT generation_id, cost_nanos FROM ledger`
    }))

  it("lines split by their preferences: Mistral's go to its batch job at the batch price, the others live to a provider without one; each generation names its provider and mode", async () => {
    const texts = Array.from({ length: 8 }, (_, i) => `split text number ${i} of the corpus`)
    const jobsBefore = mistral.jobs.all.size
    const plainBefore = liveInputs(plain)
    const batch = await run(texts.map((t, i) => line(`s${i}`, t, i % 2 === 0 ? "mistral" : "plain")).join("\n"))
    assert.deepStrictEqual(batch.request_counts, { total: 8, completed: 8, failed: 0 })
    assert.strictEqual(mistral.jobs.all.size - jobsBefore, 1, "one job for the unit's Mistral lines")
    const job = [...mistral.jobs.all.values()].at(-1)!
    assert.sameMembers(job.requests.flatMap((r) => r.body.input as Array<string>), texts.filter((_, i) => i % 2 === 0))
    assert.strictEqual(liveInputs(plain) - plainBefore, 4, "the other lines live, at the provider without a batch API")
    assert.strictEqual(liveInputs(mistral), 0, "no live call to Mistral")

    for (const o of await output(batch)) {
      const i = Number(o.custom_id.slice(1))
      const usage = o.response.body.usage
      const record = await generation(o.response.request_id)
      if (i % 2 === 0) {
        assert.strictEqual(o.response.body.provider, "mistral")
        assert.deepStrictEqual(o.response.body.data[0].embedding, FakeUpstream.vectorFor(`mistral-embed|${texts[i]}`, 16))
        assert.strictEqual(usage.cost, costOf(usage.prompt_tokens, batchPrice))
        assert.deepStrictEqual([record.provider, record.batch_mode], ["mistral", "provider_batch"])
      } else {
        assert.strictEqual(o.response.body.provider, "plain")
        assert.strictEqual(usage.cost, costOf(usage.prompt_tokens, plainPrice))
        assert.deepStrictEqual([record.provider, record.batch_mode], ["plain", "live"])
      }
    }
    assert.deepStrictEqual(batch.provider_jobs, [{ provider: "mistral", job_id: job.id, status: "completed", lines: 4 }])
    // A live request is no batch's line.
    const request = await gateway.embed({ model: "acme/embed", input: "a request", provider: { order: ["plain"] } })
    assert.isNull((await generation(request.json.id)).batch_mode)
    const metrics = await (await fetch(`${gateway.server.origin}/metrics`)).text()
    assert.match(metrics, /switchyard_batch_lines_total\{[^}]*mode="provider_batch",provider="mistral"\} 4/u)
    assert.match(metrics, /switchyard_batch_lines_total\{[^}]*mode="live",provider="plain"\} 4/u)
    await until(async () => mistral.files.size, (n) => n === 0, 10_000)
  })

  it("a job that fails and one that expires: their lines finish live, none lost or doubled; the error file holds only the line the provider refused", async () => {
    // Units of 10: the first job fails outright, the second expires halfway (its first half served).
    mistral.jobs.endNext("failed", "expired")
    const texts = Array.from({ length: 20 }, (_, i) => (i === 11 ? "refuse me" : `ending text number ${i} of the corpus`))
    const mistralLiveBefore = liveInputs(mistral)
    const batch = await run(texts.map((t, i) => line(`e${i}`, t, "mistral")).join("\n"))
    assert.deepStrictEqual(batch.request_counts, { total: 20, completed: 19, failed: 1 })
    const jobs = [...mistral.jobs.all.values()].slice(-2)
    assert.sameMembers(jobs.map((j) => j.state), ["failed", "expired"])
    // The expired job served its first half; the other lines ran live at Mistral, their route's first.
    const answered = jobs.flatMap((j) => j.outputs.map((o) => JSON.parse(o) as { custom_id: string; response: { status_code: number } }))
    assert.strictEqual(answered.length, 5)
    // A job's keys are the batch's line numbers, which count from 1.
    const servedByJob = new Set(answered.filter((a) => a.response.status_code === 200).map((a) => Number(a.custom_id.slice("line-".length)) - 1))
    assert.strictEqual(liveInputs(mistral) - mistralLiveBefore, 20 - answered.length)

    const out = await output(batch)
    assert.sameMembers(out.map((o) => o.custom_id), texts.flatMap((_, i) => (i === 11 ? [] : [`e${i}`])), "every line once")
    for (const o of out) {
      const i = Number(o.custom_id.slice(1))
      const usage = o.response.body.usage
      const byJob = servedByJob.has(i)
      assert.deepStrictEqual(o.response.body.data[0].embedding, FakeUpstream.vectorFor(`mistral-embed|${texts[i]}`, 16))
      assert.strictEqual(usage.cost, costOf(usage.prompt_tokens, byJob ? batchPrice : live), `line ${i}`)
      assert.strictEqual((await generation(o.response.request_id)).batch_mode, byJob ? "provider_batch" : "live")
    }
    const errorLines = await errors(batch)
    assert.deepStrictEqual(errorLines.map((e) => e.custom_id), ["e11"])
    assert.strictEqual(errorLines[0].error.code, 400)
    assert.include(errorLines[0].error.message, "This input was refused")

    // One ledger row per served line, charged once: the batch's cost is the output's.
    const rows = (await ledger()).filter((r) => out.some((o) => o.response.request_id === r.generation_id))
    assert.strictEqual(rows.length, 19)
    const outNanos = out.reduce((n, o) => n + nanosFromCredits(o.response.body.usage.cost)!, 0n)
    assert.strictEqual(rows.reduce((n, r) => n + BigInt(r.cost_nanos), 0n), outNanos)
    assert.strictEqual(nanosFromCredits(batch.cost), outNanos)
    assert.sameMembers(batch.provider_jobs.map((j) => j.status), ["failed", "expired"])
    await until(async () => mistral.files.size, (n) => n === 0, 10_000)
  })
})

describe("provider batches at Mistral: a cancel, and the retention sweep", () => {
  const start = async (fakeOptions: FakeMistralBatch.Options, extra: Record<string, string>) => {
    const mistral = await FakeMistralBatch.start(fakeOptions)
    const plain = await FakeOpenAi.start()
    const gateway = await startGateway({ config: config(mistral.url, plain.url), credits: 10, env: { ...env, ...extra } })
    const client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const close = async () => {
      await gateway.close()
      await mistral.close()
      await plain.close()
    }
    return { mistral, gateway, client, close }
  }
  const create = async (client: OpenAI, n: number, tag: string) => {
    const input = Array.from({ length: n }, (_, i) => line(`${tag}${i}`, `${tag} text number ${i} of the corpus`, "mistral")).join("\n")
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "input.jsonl"), purpose: "batch" })
    return (await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })).id
  }

  it("a cancel of the batch cancels its job at Mistral; the lines it served are written and charged, the others left out; its files deleted", async () => {
    const { mistral, client, close } = await start({ linesPerPoll: 1 }, { SWITCHYARD_BATCH_UNIT_LINES: "64" })
    try {
      const id = await create(client, 30, "c")
      await until(async () => [...mistral.jobs.all.values()][0]?.outputs.length ?? 0, (n) => n >= 2, 30_000)
      await client.batches.cancel(id)
      const cancelled = (await until(() => client.batches.retrieve(id), (b) => b.status === "cancelled", 10_000)) as Batch
      const job = [...mistral.jobs.all.values()][0]!
      assert.strictEqual(job.state, "cancelled")
      assert.strictEqual(mistral.requests.filter((r) => r.method === "POST" && r.path === `/v1/batch/jobs/${job.id}/cancel`).length, 1)
      assert.strictEqual(cancelled.request_counts!.completed, job.outputs.length)
      assert.isBelow(job.outputs.length, 30)
      assert.deepStrictEqual(cancelled.provider_jobs.map((j) => [j.status, j.lines]), [["cancelled", 30]])
      const out = jsonLines(await (await client.files.content(cancelled.output_file_id!)).text())
      for (const o of out) assert.strictEqual(o.response.body.usage.cost, costOf(o.response.body.usage.prompt_tokens, batchPrice))
      assert.strictEqual(nanosFromCredits(cancelled.cost), out.reduce((n, o) => n + nanosFromCredits(o.response.body.usage.cost)!, 0n))
      await until(async () => mistral.files.size, (n) => n === 0, 10_000)
    } finally {
      await close()
    }
  })

  it("the retention sweep deletes a running job's upload at the provider; what the job writes later goes once its lines are written", async () => {
    const { mistral, client, close } = await start({}, { SWITCHYARD_BATCH_RETENTION: "4 seconds" })
    try {
      mistral.jobs.pause(true)
      const id = await create(client, 4, "r")
      await until(async () => [...mistral.jobs.all.values()][0]?.state, (s) => s === "running", 30_000)
      const upload = [...mistral.jobs.all.values()][0]!.meta.input as string
      // Older than the retention, and still running: its upload goes.
      await until(async () => mistral.files.has(upload), (has) => !has, 15_000)
      mistral.jobs.pause(false)
      const done = await until(() => client.batches.retrieve(id), (b) => b.status === "completed", 15_000)
      assert.deepStrictEqual(done.request_counts, { total: 4, completed: 4, failed: 0 })
      await until(async () => mistral.files.size, (n) => n === 0, 10_000)
    } finally {
      await close()
    }
  })
})
