import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import OpenAI, { toFile } from "openai"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as FakeOpenAiBatch from "../fakes/FakeOpenAiBatch.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { costOf, endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

// Batches whose lines route to an endpoint with a batch price at a provider with OpenAI's Batch
// API: the gateway runs them as provider batches against a fake of OpenAI's Files and Batch API.

const live = "0.1"
const batchPrice = "0.04"

const config = (url: string) => ({
  providers: [
    provider("alpha", url, { dialect: "openai" }, [
      endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: live, batch: { prompt: batchPrice } } }),
      endpoint("acme/plain", { upstream_model: "plain", pricing: { prompt: "0.2" } })
    ])
  ]
})

const env = {
  SWITCHYARD_BATCH_POLL_MS: "100",
  SWITCHYARD_PROVIDER_BATCH_POLL_MS: "200",
  SWITCHYARD_BATCH_UNIT_LINES: "8"
}

const line = (customId: string, body: unknown) => JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/embeddings", body })

const texts = (n: number, tag: string) => Array.from({ length: n }, (_, i) => `${tag} text number ${i} of the corpus`)

const jsonLines = (text: string) => text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean, timeoutMs = 30_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`not done in time: ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

const ledger = (gateway: Gateway) =>
  gateway.server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ readonly generation_id: string; readonly cost_nanos: string | number }>`SELECT generation_id, cost_nanos FROM ledger`
  }))

const activityNanos = async (gateway: Gateway) => {
  const activity = await gateway.call("/activity", undefined, { key: gateway.server.managementKey })
  return (activity.json.data as Array<{ usage: number }>).reduce((n, item) => n + nanosFromCredits(item.usage)!, 0n)
}

const upstreamCalls = (fake: FakeUpstream.FakeServer, method: string, path: string) =>
  fake.requests.filter((r) => r.method === method && r.path.split("?")[0] === path).length

const run = async (client: OpenAI, input: string, headers: Record<string, string> = {}) => {
  const file = await client.files.create({ file: await toFile(Buffer.from(input), "input.jsonl"), purpose: "batch" })
  const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" }, { headers })
  return created.id
}

const outputOf = async (client: OpenAI, batch: OpenAI.Batch) =>
  batch.output_file_id === null ? [] : jsonLines(await (await client.files.content(batch.output_file_id!)).text())

/** Switchyard's `cost` of a batch (USD charged for its served lines so far). */
const costOfBatch = (batch: OpenAI.Batch) => (batch as OpenAI.Batch & { readonly cost: number }).cost

const errorsOf = async (client: OpenAI, batch: OpenAI.Batch) =>
  batch.error_file_id === null ? [] : jsonLines(await (await client.files.content(batch.error_file_id!)).text())

/** Every key of a JSON value, by path, with the vectors' items left out. */
const shape = (value: unknown, path = ""): Array<string> => {
  if (Array.isArray(value)) return value.length === 0 || typeof value[0] === "number" ? [path] : shape(value[0], `${path}[]`)
  if (typeof value === "object" && value !== null) {
    return Object.entries(value).flatMap(([k, v]) => [`${path}.${k}`, ...shape(v, `${path}.${k}`)])
  }
  return [`${path}:${value === null ? "null" : typeof value}`]
}

describe("batches through a provider's batch API (OpenAI's, faked)", () => {
  let upstream: FakeOpenAiBatch.FakeBatchServer
  let gateway: Gateway
  let client: OpenAI

  beforeAll(async () => {
    upstream = await FakeOpenAiBatch.start({
      failRequest: (_, body) =>
        FakeUpstream.isRecord(body) && JSON.stringify(body.input) === JSON.stringify(["refuse me"]) ? { status: 400, message: "This input was refused" } : undefined
    })
    gateway = await startGateway({ config: config(upstream.url), credits: 10, env })
    client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway?.close()
    await upstream?.close()
  })

  it("lines routed to an endpoint with a batch price run as provider batches, charged at the batch price; the output has the live format", async () => {
    const corpus = texts(12, "priced")
    const input = [
      ...corpus.map((t, i) => line(`b${i}`, { model: "acme/embed", input: t })),
      line("plain", { model: "acme/plain", input: "no batch price here" }),
      line("refused", { model: "acme/embed", input: "refuse me" }),
      "not json"
    ].join("\n")
    const embeddingsBefore = upstreamCalls(upstream, "POST", "/v1/embeddings")
    const batchesBefore = upstream.batches.size
    const id = await run(client, input)
    const batch = await until(() => client.batches.retrieve(id), (b) => b.status === "completed" || b.status === "failed")
    assert.strictEqual(batch.status, "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 15, completed: 13, failed: 2 })

    // Units of 8: two provider batches (one per unit), the file uploaded and the batch made once each.
    assert.strictEqual(upstream.batches.size - batchesBefore, 2)
    const made = [...upstream.batches.values()].slice(batchesBefore)
    assert.sameMembers(made.flatMap((b) => b.requests.flatMap((r) => (r.body as { input: Array<string> }).input)), [...corpus, "refuse me"])
    for (const b of made) assert.strictEqual(b.status, "completed")
    // Only the line without a batch price ran live.
    assert.strictEqual(upstreamCalls(upstream, "POST", "/v1/embeddings") - embeddingsBefore, 1)

    const output = await outputOf(client, batch)
    assert.sameMembers(output.map((o) => o.custom_id), [...corpus.map((_, i) => `b${i}`), "plain"])
    for (const o of output) {
      assert.strictEqual(o.response.status_code, 200)
      assert.isNull(o.error)
      assert.match(o.response.request_id, /^gen-emb-/u)
      assert.strictEqual(o.response.body.id, o.response.request_id)
      const usage = o.response.body.usage
      if (o.custom_id === "plain") {
        assert.strictEqual(usage.cost, costOf(usage.prompt_tokens, "0.2"))
        continue
      }
      const i = Number(o.custom_id.slice(1))
      assert.deepStrictEqual(o.response.body.data[0].embedding, FakeUpstream.vectorFor(`embed|${corpus[i]}`, 16))
      assert.strictEqual(o.response.body.provider, "alpha")
      assert.isAbove(usage.prompt_tokens, 0)
      assert.strictEqual(usage.cost, costOf(usage.prompt_tokens, batchPrice), "charged at the batch price")
    }
    const errors = await errorsOf(client, batch)
    assert.sameMembers(errors.map((e) => e.custom_id), ["refused", null])
    const refused = errors.find((e) => e.custom_id === "refused")
    assert.strictEqual(refused.error.code, 400)
    assert.include(refused.error.message, "This input was refused")

    // One ledger row per served line; the ledger, /activity and the lines add up to the same nanos.
    const rows = await ledger(gateway)
    assert.sameMembers(rows.map((r) => r.generation_id), output.map((o) => o.response.request_id))
    const ledgerNanos = rows.reduce((n, r) => n + BigInt(r.cost_nanos), 0n)
    const lineNanos = output.reduce((n, o) => n + nanosFromCredits(o.response.body.usage.cost)!, 0n)
    assert.strictEqual(ledgerNanos, lineNanos)
    assert.strictEqual(await activityNanos(gateway), ledgerNanos)
    assert.strictEqual(nanosFromCredits(costOfBatch(batch)), ledgerNanos, "the batch's cost so far counts its provider batches' lines")
    const generation = await gateway.call(`/generation?id=${output.find((o) => o.custom_id === "b0").response.request_id}`)
    assert.strictEqual(generation.status, 200, generation.text)

    // The same lines asked live: the same vectors in the same format, at the live price.
    const liveId = await run(client, corpus.map((t, i) => line(`b${i}`, { model: "acme/embed", input: t })).join("\n"), {
      "x-switchyard-batch-execution": "live"
    })
    const liveBatch = await until(() => client.batches.retrieve(liveId), (b) => b.status === "completed")
    const liveOutput = await outputOf(client, liveBatch)
    assert.strictEqual(liveOutput.length, corpus.length)
    for (const l of liveOutput) {
      const p = output.find((o) => o.custom_id === l.custom_id)
      assert.deepStrictEqual(shape(p), shape(l), "the same keys and value types")
      assert.deepStrictEqual(p.response.body.data, l.response.body.data)
      assert.strictEqual(l.response.body.usage.prompt_tokens, p.response.body.usage.prompt_tokens)
      assert.strictEqual(l.response.body.usage.cost, costOf(l.response.body.usage.prompt_tokens, live))
    }
  })

  it("a provider that refuses the upload: the lines run live, at the live price, once", async () => {
    const corpus = texts(3, "refused upload")
    const batchesBefore = upstream.batches.size
    const embeddingsBefore = upstreamCalls(upstream, "POST", "/v1/embeddings")
    const uploadsBefore = upstreamCalls(upstream, "POST", "/v1/files")
    // The next request the provider gets is the upload: refused as a bad request (not worth a retry).
    upstream.setBehaviour([{ _tag: "Status", status: 400 }])
    const id = await run(client, corpus.map((t, i) => line(`u${i}`, { model: "acme/embed", input: t })).join("\n"))
    const batch = await until(() => client.batches.retrieve(id), (b) => b.status === "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 3, completed: 3, failed: 0 })
    assert.strictEqual(upstreamCalls(upstream, "POST", "/v1/files") - uploadsBefore, 1)
    assert.strictEqual(upstream.batches.size, batchesBefore, "no provider batch")
    assert.isAbove(upstreamCalls(upstream, "POST", "/v1/embeddings"), embeddingsBefore)
    const output = await outputOf(client, batch)
    assert.sameMembers(output.map((o) => o.custom_id), ["u0", "u1", "u2"])
    for (const o of output) assert.strictEqual(o.response.body.usage.cost, costOf(o.response.body.usage.prompt_tokens, live))
    const rows = await ledger(gateway)
    for (const o of output) assert.include(rows.map((r) => r.generation_id), o.response.request_id)
  })

  it("x-switchyard-batch-execution: live keeps every line on live calls; a value it does not know is a 400", async () => {
    const corpus = texts(5, "live")
    const batchesBefore = upstream.batches.size
    const embeddingsBefore = upstreamCalls(upstream, "POST", "/v1/embeddings")
    const id = await run(client, corpus.map((t, i) => line(`l${i}`, { model: "acme/embed", input: t })).join("\n"), {
      "x-switchyard-batch-execution": "live"
    })
    const batch = await until(() => client.batches.retrieve(id), (b) => b.status === "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 5, completed: 5, failed: 0 })
    assert.strictEqual(upstream.batches.size, batchesBefore, "no provider batch")
    assert.isAbove(upstreamCalls(upstream, "POST", "/v1/embeddings"), embeddingsBefore)
    for (const o of await outputOf(client, batch)) {
      assert.strictEqual(o.response.body.usage.cost, costOf(o.response.body.usage.prompt_tokens, live))
    }

    const file = await client.files.create({ file: await toFile(Buffer.from(line("x", { model: "acme/embed", input: "x" })), "x.jsonl"), purpose: "batch" })
    const refused = await client.batches.create(
      { input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" },
      { headers: { "x-switchyard-batch-execution": "sometimes" } }
    ).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(refused, OpenAI.BadRequestError)
    assert.include((refused as Error).message, "x-switchyard-batch-execution")
  })
})

describe("provider batches: cancel and restart", () => {
  it("cancel of a batch whose provider batch is running cancels it upstream within 5 s; only the lines it served are charged", async () => {
    // The provider batch runs one request per poll: the cancel lands midway.
    const upstream = await FakeOpenAiBatch.start({ linesPerPoll: 1 })
    const gateway = await startGateway({ config: config(upstream.url), credits: 10, env: { ...env, SWITCHYARD_BATCH_UNIT_LINES: "64" } })
    try {
      const client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
      const corpus = texts(40, "cancel")
      const id = await run(client, corpus.map((t, i) => line(`c${i}`, { model: "acme/embed", input: t })).join("\n"))
      await until(async () => [...upstream.batches.values()][0]?.results.length ?? 0, (n) => n >= 2)
      const asked = Date.now()
      const cancelling = await client.batches.cancel(id)
      assert.strictEqual(cancelling.status, "cancelling")
      const cancelled = await until(() => client.batches.retrieve(id), (b) => b.status === "cancelled", 5_000)
      assert.isBelow(Date.now() - asked, 5_000)
      const fake = [...upstream.batches.values()][0]!
      assert.strictEqual(fake.status, "cancelled", "cancelled upstream")
      assert.strictEqual(upstreamCalls(upstream, "POST", `/v1/batches/${fake.id}/cancel`), 1)
      const served = cancelled.request_counts!.completed
      assert.strictEqual(served, fake.results.length, "the lines the provider served")
      assert.isBelow(served, corpus.length)
      assert.strictEqual(cancelled.request_counts!.failed, 0)
      const output = await outputOf(client, cancelled)
      assert.strictEqual(output.length, served)
      for (const o of output) assert.strictEqual(o.response.body.usage.cost, costOf(o.response.body.usage.prompt_tokens, batchPrice))
      const rows = await ledger(gateway)
      assert.sameMembers(rows.map((r) => r.generation_id), output.map((o) => o.response.request_id))
      const ledgerNanos = rows.reduce((n, r) => n + BigInt(r.cost_nanos), 0n)
      assert.strictEqual(await activityNanos(gateway), ledgerNanos)
      assert.strictEqual(nanosFromCredits(costOfBatch(cancelled)), ledgerNanos)
    } finally {
      await gateway.close()
      await upstream.close()
    }
  })

  it("a gateway stopped while its provider batch runs polls the same provider batch after a restart: submitted once, every line once, charged once", async () => {
    const upstream = await FakeOpenAiBatch.start()
    upstream.pause(true)
    const keys = { apiKey: KeySecret.generate(), managementKey: KeySecret.generate() }
    const dataDir = tempDir("provider-batches")
    const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
    const same = { dataDir, keys, ...(databaseUrl !== undefined ? { databaseUrl } : {}) }
    try {
      const first = await startGateway({ config: config(upstream.url), credits: 10, env, ...same })
      const corpus = texts(6, "restart")
      let id: string
      try {
        const client = new OpenAI({ apiKey: keys.apiKey, baseURL: first.server.baseUrl, maxRetries: 0 })
        id = await run(client, corpus.map((t, i) => line(`r${i}`, { model: "acme/embed", input: t })).join("\n"))
        // Submitted and polled: the provider batch is running, none of its lines served yet.
        await until(async () => [...upstream.batches.values()][0]?.status, (s) => s === "in_progress")
        const midway = await client.batches.retrieve(id)
        assert.strictEqual(midway.status, "in_progress")
        assert.strictEqual(midway.request_counts!.completed, 0)
      } finally {
        await first.close()
      }
      const polls = upstreamCalls(upstream, "GET", `/v1/batches/${[...upstream.batches.keys()][0]}`)
      upstream.pause(false)
      const second = await startGateway({ config: config(upstream.url), env, ...same })
      try {
        const client = new OpenAI({ apiKey: keys.apiKey, baseURL: second.server.baseUrl, maxRetries: 0 })
        const done = await until(() => client.batches.retrieve(id), (b) => b.status === "completed")
        assert.deepStrictEqual(done.request_counts, { total: 6, completed: 6, failed: 0 })
        assert.strictEqual(upstream.batches.size, 1, "not submitted again")
        assert.strictEqual(upstreamCalls(upstream, "POST", "/v1/batches"), 1)
        assert.strictEqual(upstreamCalls(upstream, "POST", "/v1/files"), 1)
        assert.isAbove(upstreamCalls(upstream, "GET", `/v1/batches/${[...upstream.batches.keys()][0]}`), polls, "polled after the restart")
        const output = await outputOf(client, done)
        assert.sameMembers(output.map((o) => o.custom_id), corpus.map((_, i) => `r${i}`))
        const rows = await ledger(second)
        assert.strictEqual(rows.length, 6)
        assert.sameMembers(rows.map((r) => r.generation_id), output.map((o) => o.response.request_id))
        const lineNanos = output.reduce((n, o) => n + nanosFromCredits(o.response.body.usage.cost)!, 0n)
        assert.strictEqual(rows.reduce((n, r) => n + BigInt(r.cost_nanos), 0n), lineNanos)
        assert.strictEqual(await activityNanos(second), lineNanos)
      } finally {
        await second.close()
      }
    } finally {
      await upstream.close()
      if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
    }
  })
})
