import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Http from "node:http"
import OpenAI, { toFile } from "openai"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { costOf, endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"

const texts = ["the quick brown fox", "jumps over", "the lazy dog", "again and again", "one", "two words"]

const line = (customId: string, body: unknown, url = "/v1/embeddings") => JSON.stringify({ custom_id: customId, method: "POST", url, body })

// Switchyard's addition to OpenAI's batch object, which the SDK's types do not name.
const costSoFar = (batch: object) => (batch as { readonly cost: number }).cost

const ledger = (gateway: Gateway) =>
  gateway.server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ readonly generation_id: string; readonly cost_nanos: string | number }>`SELECT generation_id, cost_nanos FROM ledger`
  }))

const waitForStatus = async (client: OpenAI, id: string, statuses: ReadonlyArray<string>, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const batch = await client.batches.retrieve(id)
    if (statuses.includes(batch.status)) return batch
    if (Date.now() > deadline) throw new Error(`batch ${id} still ${batch.status}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const jsonLines = (text: string) => text.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))

describe("openai SDK against Switchyard: files and batches", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let client: OpenAI
  let otherClient: OpenAI

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [
            endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" }, supported_parameters: ["dimensions", "encoding_format"] }),
            endpoint("acme/pricey", { upstream_model: "pricey", pricing: { prompt: "100000" } })
          ])
        ]
      },
      credits: 10,
      env: { SWITCHYARD_BATCH_POLL_MS: "100", SWITCHYARD_BATCH_UNIT_LINES: "16" }
    })
    client = new OpenAI({ apiKey: gateway.server.apiKey, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const operator = gateway.server.managementKey
    const team = await gateway.call("/workspaces", { name: "Team B", slug: "team-b" }, { key: operator })
    assert.strictEqual(team.status, 201, team.text)
    const key = await gateway.call("/keys", { name: "B app", workspace_id: team.json.data.id }, { key: operator })
    assert.isBelow(key.status, 300, key.text)
    otherClient = new OpenAI({ apiKey: key.json.key, baseURL: gateway.server.baseUrl, maxRetries: 0 })
  })
  afterAll(async () => {
    await gateway?.close()
    await alpha?.close()
  })

  it("files.create → batches.create → batches.retrieve until completed → files.content: every line once, charged once, exactly", async () => {
    const input = [
      ...texts.map((t, i) => line(`req-${i}`, { model: "acme/embed", input: t })),
      "this is not json",
      line("wrong-url", { model: "acme/embed", input: "x" }, "/v1/chat/completions"),
      "",
      line("bad-body", { model: "acme/embed" })
    ].join("\n")
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "input.jsonl"), purpose: "batch" })
    // Kept 30 days (SWITCHYARD_BATCH_RETENTION), and it says when it goes.
    assert.strictEqual(file.expires_at, file.created_at + 30 * 24 * 3600)
    assert.strictEqual(file.object, "file")
    assert.strictEqual(file.purpose, "batch")
    assert.strictEqual(file.bytes, Buffer.byteLength(input))
    assert.strictEqual((await client.files.retrieve(file.id)).id, file.id)
    assert.strictEqual(await (await client.files.content(file.id)).text(), `${input}\n`)

    const calls = alpha.requests.length
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/embeddings",
      completion_window: "24h",
      metadata: { corpus: "test" }
    })
    assert.strictEqual(created.status, "validating")
    assert.deepStrictEqual(created.metadata, { corpus: "test" })
    const batch = await waitForStatus(client, created.id, ["completed", "failed"])
    assert.strictEqual(batch.status, "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 9, completed: 6, failed: 3 })
    assert.isNumber(batch.completed_at)
    assert.isNumber(batch.in_progress_at)

    // The six lines differ only in their input: one upstream call serves them all.
    assert.strictEqual(alpha.requests.length - calls, 1)
    assert.deepStrictEqual((alpha.requests.at(-1)!.body as { input: Array<string> }).input, texts)
    const output = jsonLines(await (await client.files.content(batch.output_file_id!)).text())
    assert.sameMembers(output.map((o) => o.custom_id), texts.map((_, i) => `req-${i}`))
    for (const o of output) {
      const i = Number(o.custom_id.slice(4))
      assert.strictEqual(o.response.status_code, 200)
      assert.isNull(o.error)
      assert.match(o.response.request_id, /^gen-emb-/u)
      assert.strictEqual(o.response.body.id, o.response.request_id)
      assert.deepStrictEqual(o.response.body.data.map((d: { index: number }) => d.index), [0])
      assert.deepStrictEqual(o.response.body.data[0].embedding, FakeUpstream.vectorFor(`embed|${texts[i]}`, 16))
      assert.strictEqual(o.response.body.usage.cost, costOf(o.response.body.usage.prompt_tokens, "0.1"))
    }
    const errors = jsonLines(await (await client.files.content(batch.error_file_id!)).text())
    assert.sameMembers(errors.map((e) => e.custom_id), [null, "wrong-url", "bad-body"])
    for (const e of errors) {
      assert.isNull(e.response)
      assert.strictEqual(e.error.code, 400)
    }
    assert.include(errors.find((e) => e.custom_id === null).error.message, "Line 7")
    assert.include(errors.find((e) => e.custom_id === "bad-body").error.message, "input")

    // One ledger row per served line, under the line's generation id; /activity adds up to the same nanos.
    const rows = await ledger(gateway)
    assert.sameMembers(rows.map((r) => r.generation_id), output.map((o) => o.response.request_id))
    const ledgerNanos = rows.reduce((n, r) => n + BigInt(r.cost_nanos), 0n)
    const lineNanos = output.reduce((n, o) => n + BigInt(Math.round(o.response.body.usage.cost * 1e9)), 0n)
    assert.strictEqual(ledgerNanos, lineNanos)
    assert.isTrue(ledgerNanos > 0n)
    const activity = await gateway.call("/activity", undefined, { key: gateway.server.managementKey })
    const activityNanos = (activity.json.data as Array<{ usage: number }>).reduce((n, item) => n + Math.round(item.usage * 1e9), 0)
    assert.strictEqual(BigInt(activityNanos), ledgerNanos)
    // The batch says what its lines cost so far: the same nanos.
    assert.strictEqual(BigInt(Math.round(costSoFar(await client.batches.retrieve(batch.id)) * 1e9)), ledgerNanos)
    assert.strictEqual(costSoFar(created), 0)
    const generation = await gateway.call(`/generation?id=${output[0].response.request_id}`)
    assert.strictEqual(generation.status, 200, generation.text)

    const metrics = await (await fetch(`${gateway.server.origin}/metrics`)).text()
    // Summed over the providers that served them; every line of this batch ran live.
    const counted = (outcome: string) =>
      [...metrics.matchAll(new RegExp(`^switchyard_batch_lines_total\\{endpoint="/v1/embeddings",outcome="${outcome}",mode="live",provider="[^"]*"\\} (\\d+)$`, "gmu"))]
        .reduce((n, m) => n + Number(m[1]), 0)
    assert.strictEqual(counted("served"), 6)
    assert.strictEqual(counted("failed"), 3)
    assert.notMatch(metrics, /mode="provider_batch"/u)

    const listed = await client.batches.list({ limit: 10 })
    assert.include(listed.data.map((b) => b.id), batch.id)
    assert.include((await client.files.list()).data.map((f) => f.id), batch.output_file_id)

    // Another workspace sees none of it.
    for (const attempt of [
      () => otherClient.batches.retrieve(batch.id),
      () => otherClient.files.retrieve(file.id),
      () => otherClient.files.content(batch.output_file_id!),
      () => otherClient.batches.cancel(batch.id),
      () => otherClient.files.delete(file.id)
    ]) {
      const error = await attempt().then(() => undefined, (e: unknown) => e)
      assert.instanceOf(error, OpenAI.NotFoundError)
    }
    assert.notInclude((await otherClient.batches.list()).data.map((b) => b.id), batch.id)
  })

  it("wrong purposes, oversize uploads and files that are not JSONL get OpenAI's errors; nothing is stored or charged", async () => {
    const before = (await ledger(gateway)).length
    const filesBefore = (await client.files.list()).data.length
    const wrong = await client.files.create({ file: await toFile(Buffer.from(line("a", { model: "acme/embed", input: "x" })), "a.jsonl"), purpose: "fine-tune" })
      .then(() => undefined, (e: unknown) => e)
    assert.instanceOf(wrong, OpenAI.BadRequestError)
    assert.include((wrong as Error).message, "purpose")
    assert.strictEqual((await client.files.list()).data.length, filesBefore)

    // Refused on its declared length, before any of it is read.
    const oversize = await new Promise<number>((resolve, reject) => {
      const url = new URL(`${gateway.server.baseUrl}/files`)
      const request = Http.request({
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method: "POST",
        headers: {
          authorization: `Bearer ${gateway.server.apiKey}`,
          "content-type": "multipart/form-data; boundary=x",
          "content-length": String(201 * 1024 * 1024 + 1)
        }
      }, (response) => {
        response.resume()
        resolve(response.statusCode ?? 0)
        request.destroy()
      })
      request.on("error", reject)
      request.flushHeaders()
    })
    assert.strictEqual(oversize, 413)

    const notJsonl = await client.files.create({ file: await toFile(Buffer.from("hello\nworld\n"), "notes.jsonl"), purpose: "batch" })
    const created = await client.batches.create({ input_file_id: notJsonl.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    const failed = await waitForStatus(client, created.id, ["failed", "completed"])
    assert.strictEqual(failed.status, "failed")
    assert.strictEqual(failed.errors?.data?.[0]?.code, "invalid_json_line")
    assert.isNull(failed.output_file_id)

    const missing = await client.batches.create({ input_file_id: "file-nope", endpoint: "/v1/embeddings", completion_window: "24h" })
      .then(() => undefined, (e: unknown) => e)
    assert.instanceOf(missing, OpenAI.NotFoundError)
    const badWindow = await client.batches.create({ input_file_id: notJsonl.id, endpoint: "/v1/embeddings", completion_window: "1h" as "24h" })
      .then(() => undefined, (e: unknown) => e)
    assert.instanceOf(badWindow, OpenAI.BadRequestError)
    assert.strictEqual((await ledger(gateway)).length, before)

    const deleted = await client.files.delete(notJsonl.id)
    assert.isTrue(deleted.deleted)
    assert.instanceOf(await client.files.retrieve(notJsonl.id).then(() => undefined, (e: unknown) => e), OpenAI.NotFoundError)
  })

  it("takes the file part whatever its type: application/jsonl, as a browser's FormData or curl may send it", async () => {
    const form = new FormData()
    form.append("purpose", "batch")
    form.append("file", new Blob([line("t0", { model: "acme/embed", input: "typed" })], { type: "application/jsonl" }), "typed.jsonl")
    const uploaded = await fetch(`${gateway.server.baseUrl}/files`, { method: "POST", headers: { authorization: `Bearer ${gateway.server.apiKey}` }, body: form })
    const body = await uploaded.json() as { readonly filename: string; readonly bytes: number; readonly purpose: string }
    assert.strictEqual(uploaded.status, 200, JSON.stringify(body))
    assert.deepInclude(body, { filename: "typed.jsonl", purpose: "batch" })
    assert.isAbove(body.bytes, 0)
  })

  it("a key limit's refusals are error lines with the live status and message; the other lines are served and charged", async () => {
    const limited = await gateway.call("/keys", { name: "limited", limit: 2 }, { key: gateway.server.managementKey })
    assert.isBelow(limited.status, 300, limited.text)
    const keyed = new OpenAI({ apiKey: limited.json.key, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const input = Array.from({ length: 10 }, (_, i) => line(`p${i}`, { model: "acme/pricey", input: "one two three" })).join("\n")
    const file = await keyed.files.create({ file: await toFile(Buffer.from(input), "pricey.jsonl"), purpose: "batch" })
    const created = await keyed.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    const batch = await waitForStatus(keyed, created.id, ["completed", "failed"])
    assert.strictEqual(batch.status, "completed")
    const counts = batch.request_counts!
    assert.strictEqual(counts.total, 10)
    assert.strictEqual(counts.completed + counts.failed, 10)
    assert.isAbove(counts.completed, 0)
    assert.isAbove(counts.failed, 0)
    const errors = jsonLines(await (await keyed.files.content(batch.error_file_id!)).text())
    for (const e of errors) {
      assert.strictEqual(e.error.code, 402)
      assert.match(e.error.message, /limit/iu)
    }
    const output = jsonLines(await (await keyed.files.content(batch.output_file_id!)).text())
    const spent = output.reduce((n, o) => n + o.response.body.usage.cost, 0)
    assert.isAtMost(spent, 2)
    const key = await gateway.call("/key", undefined, { key: limited.json.key })
    assert.strictEqual(Math.round(key.json.data.usage * 1e9), Math.round(spent * 1e9))
    assert.strictEqual(Math.round(costSoFar(batch) * 1e9), Math.round(spent * 1e9))
  })

  it("a /v1/rerank batch runs each line as POST /rerank and answers with its scores", async () => {
    const documents = ["The train leaves at nine.", "Plants use sunlight to make sugar.", "Flour, butter, eggs."]
    const input = [
      line("r0", { model: "switchyard/local-rerank", query: "how do plants make sugar", documents }, "/v1/rerank"),
      line("r1", { model: "switchyard/local-rerank", query: "when does the train leave", documents, top_n: 1 }, "/api/v1/rerank"),
      line("r2", { model: "switchyard/local-rerank", query: "x", documents }, "/v1/embeddings")
    ].join("\n")
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "rerank.jsonl"), purpose: "batch" })
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/rerank" as "/v1/embeddings", completion_window: "24h" })
    assert.strictEqual(created.endpoint, "/v1/rerank")
    const batch = await waitForStatus(client, created.id, ["completed", "failed"])
    assert.deepStrictEqual(batch.request_counts, { total: 3, completed: 2, failed: 1 })
    const output = jsonLines(await (await client.files.content(batch.output_file_id!)).text())
    const byId = new Map(output.map((o) => [o.custom_id, o]))
    assert.strictEqual(byId.get("r0").response.body.results[0].index, 1)
    assert.match(byId.get("r0").response.request_id, /^gen-rr-/u)
    assert.deepStrictEqual(byId.get("r1").response.body.results.map((r: { index: number }) => r.index), [0])
    const errors = jsonLines(await (await client.files.content(batch.error_file_id!)).text())
    assert.strictEqual(errors[0].custom_id, "r2")
    assert.include(errors[0].error.message, "/v1/rerank")
  })

  it("a file in which two lines share a custom_id fails validation as OpenAI's does; nothing runs or is charged", async () => {
    const before = (await ledger(gateway)).length
    const calls = alpha.requests.length
    const input = [
      line("same", { model: "acme/embed", input: "first" }),
      line("other", { model: "acme/embed", input: "second" }),
      line("same", { model: "acme/embed", input: "third" })
    ].join("\n")
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "dupes.jsonl"), purpose: "batch" })
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    const batch = await waitForStatus(client, created.id, ["failed", "completed"])
    assert.strictEqual(batch.status, "failed")
    const error = batch.errors?.data?.[0]
    assert.strictEqual(error?.code, "duplicate_custom_id")
    assert.strictEqual(error?.line, 3)
    assert.strictEqual(error?.param, "custom_id")
    assert.include(error?.message, "unique")
    assert.isNull(batch.output_file_id)
    assert.strictEqual(alpha.requests.length, calls)
    assert.strictEqual((await ledger(gateway)).length, before)
  })

  it("an output file's bytes are counted in bytes, not characters", async () => {
    const ids = ["café-1", "日本語-2", "emoji-🙂"]
    const input = ids.map((id) => line(id, { model: "acme/embed", input: `text ${id}` })).join("\n")
    const file = await client.files.create({ file: await toFile(Buffer.from(input), "utf8.jsonl"), purpose: "batch" })
    assert.strictEqual(file.bytes, Buffer.byteLength(input))
    const created = await client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    const batch = await waitForStatus(client, created.id, ["completed", "failed"])
    assert.strictEqual(batch.status, "completed")
    const content = await (await client.files.content(batch.output_file_id!)).text()
    assert.sameMembers(jsonLines(content).map((o) => o.custom_id), ids)
    const output = await client.files.retrieve(batch.output_file_id!)
    assert.isAbove(Buffer.byteLength(content), content.length)
    assert.strictEqual(output.bytes, Buffer.byteLength(content))
  })
})
