import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import { storeKind } from "../support/TestServer.ts"
import { attribute, type ObservedGateway, type OtlpSpan, spansOf, startObservedGateway, startReceiver, tracingTo, waitFor } from "./Receivers.ts"

const traceparent = /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/u

describe(`traces over OTLP/HTTP (${storeKind})`, () => {
  let observed: ObservedGateway
  let collector: Awaited<ReturnType<typeof startReceiver>>
  let webhook: Awaited<ReturnType<typeof startReceiver>>

  beforeAll(async () => {
    collector = await startReceiver()
    webhook = await startReceiver()
    observed = await startObservedGateway({
      webhookUrl: `${webhook.origin}/hooks`,
      env: tracingTo(collector)
    })
  }, 120_000)
  afterAll(async () => {
    await observed?.close()
    await collector?.close()
    await webhook?.close()
  })

  it("exports the request's span tree and propagates its traceparent to upstreams and webhooks", async () => {
    const { alpha, beta, call, gateway, keys } = observed
    assert.strictEqual((await call("/credits", { amount: 5 }, { key: keys.managementKey })).status, 200)
    // Health checks, scrapes and the console's files are not traced.
    const origin = new URL(gateway.baseUrl).origin
    assert.strictEqual((await fetch(`${origin}/api/v1/health`)).status, 200)
    assert.strictEqual((await fetch(`${origin}/metrics`)).status, 200)
    await fetch(`${origin}/ui/`)
    const clientTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
    const clientSpan = "00f067aa0ba902b7"
    alpha.setBehaviour([{ _tag: "Status", status: 503 }])
    const reply = await call(
      "/embeddings",
      { model: "acme/embed", input: "trace me", provider: { order: ["alpha", "beta"] } },
      { headers: { traceparent: `00-${clientTrace}-${clientSpan}-01` } }
    )
    assert.strictEqual(reply.status, 200, JSON.stringify(reply.json))

    let spans: ReadonlyArray<OtlpSpan> = []
    const named = (name: string) => spans.filter((s) => s.traceId === clientTrace && s.name === name)
    await waitFor(() => {
      spans = spansOf(collector.received)
      return named("Accounting.settle").length === 1 && named("POST /api/v1/embeddings").length === 1 &&
        named("Broadcast.deliver").length === 1
    })
    assert.isTrue(collector.received.every((r) => r.headers["content-type"] === "application/json"))

    const byId = new Map(spans.map((s) => [s.spanId, s]))
    const ancestors = (span: OtlpSpan): Array<string> => {
      const out: Array<string> = []
      let parent = span.parentSpanId
      while (parent !== undefined && parent !== "" && byId.has(parent)) {
        out.push(byId.get(parent)!.name)
        parent = byId.get(parent)!.parentSpanId
      }
      return out
    }

    const server = named("POST /api/v1/embeddings")[0]!
    assert.strictEqual(server.parentSpanId, clientSpan, "the caller's traceparent is the server span's parent")
    assert.strictEqual(server.kind, 2)
    assert.strictEqual(server.resource["service.name"], "switchyard")
    assert.strictEqual(Number(attribute(server, "http.response.status_code")), 200)

    const plan = named("RoutePlan.plan")
    assert.strictEqual(plan.length, 1)
    assert.include(ancestors(plan[0]!), "POST /api/v1/embeddings")

    // The request's span names the model, the serving provider, the generation, its tokens and cost.
    assert.strictEqual(attribute(server, "gen_ai.operation.name"), "embeddings")
    assert.strictEqual(attribute(server, "gen_ai.request.model"), "acme/embed")
    assert.strictEqual(attribute(server, "gen_ai.provider.name"), "beta")
    assert.strictEqual(attribute(server, "switchyard.generation_id"), reply.json.id)
    assert.strictEqual(Number(attribute(server, "gen_ai.usage.input_tokens")), reply.json.usage.total_tokens)
    assert.strictEqual(Number(attribute(server, "switchyard.cost_usd")), reply.json.usage.cost)

    const attempts = named("Embeddings.attempt")
    const providerOf = (span: OtlpSpan) => attribute(span, "gen_ai.provider.name")
    assert.deepStrictEqual(attempts.map(providerOf).sort(), ["alpha", "beta"])
    for (const attempt of attempts) {
      assert.strictEqual(attribute(attempt, "gen_ai.request.model"), "acme/embed")
      assert.strictEqual(attribute(attempt, "switchyard.endpoint"), `${providerOf(attempt)}/default@acme/embed`)
    }
    assert.strictEqual(Number(attribute(attempts.find((s) => providerOf(s) === "beta")!, "gen_ai.usage.input_tokens")), reply.json.usage.prompt_tokens)
    const failedAttempt = attempts.find((s) => providerOf(s) === "alpha")!
    assert.strictEqual(failedAttempt.status.code, 2, "the failed attempt's span is an error")
    assert.include(failedAttempt.status.message, 'Provider "alpha"')
    assert.notInclude(failedAttempt.status.message, 'Provider "upstream"')
    for (const attempt of attempts) assert.include(ancestors(attempt), "POST /api/v1/embeddings")

    for (const step of ["Accounting.reserve", "Accounting.settle"]) {
      assert.strictEqual(named(step).length, 1, step)
      assert.include(ancestors(named(step)[0]!), "POST /api/v1/embeddings", step)
    }

    // Each upstream got a valid traceparent of this trace, naming a span under its attempt.
    for (const [fake, slug] of [[alpha, "alpha"], [beta, "beta"]] as const) {
      const header = String(fake.requests.at(-1)!.headers.traceparent)
      const match = traceparent.exec(header)
      assert.isNotNull(match, header)
      assert.strictEqual(match![1], clientTrace)
      const sent = byId.get(match![2]!)
      assert.isDefined(sent, `the span ${match![2]} named by the ${slug} call was exported`)
      const attempt = attempts.find((s) => providerOf(s) === slug)!
      let parent = sent!.parentSpanId
      while (parent !== undefined && parent !== attempt.spanId && byId.has(parent)) parent = byId.get(parent)!.parentSpanId
      assert.strictEqual(parent, attempt.spanId, `the ${slug} call is under its attempt span`)
    }

    // The ledger row is written by a background flush: its own root span, with its row count,
    // linked to the request it carries, its SQL under it.
    let flush: OtlpSpan | undefined
    await waitFor(() => {
      spans = spansOf(collector.received)
      flush = spans.find((s) => s.name === "ledger.flush" && (s.links ?? []).some((l) => l.traceId === clientTrace))
      return flush !== undefined
    })
    assert.isTrue(flush!.parentSpanId === undefined || flush!.parentSpanId === "", "the flush is a root span")
    assert.isAtLeast(Number(attribute(flush!, "switchyard.ledger.rows")), 1)
    assert.isAbove(spans.filter((s) => s.parentSpanId === flush!.spanId).length, 0, "the flush's SQL is under it")
    const linked = flush!.links!.find((l) => l.traceId === clientTrace)!
    assert.include(ancestors(byId.get(linked.spanId) ?? server).concat(byId.get(linked.spanId)?.name ?? ""), "POST /api/v1/embeddings")
    for (const span of spans) {
      assert.notInclude(["GET /api/v1/health", "GET /metrics"], span.name)
      assert.notMatch(span.name, /^GET \/ui/u)
    }

    // The webhook's delivery continues the trace; its span names the destination, not its URL's query.
    const delivery = webhook.received.find((r) => JSON.parse(r.body.toString("utf8")).generation_id === reply.json.id)
    const header = traceparent.exec(String(delivery?.headers.traceparent))
    assert.isNotNull(header, String(delivery?.headers.traceparent))
    assert.strictEqual(header![1], clientTrace)
    const deliver = named("Broadcast.deliver")[0]!
    assert.strictEqual(header![2], deliver.spanId)
    assert.strictEqual(attribute(deliver, "destination"), `${webhook.origin}/hooks`)
    assert.include(ancestors(deliver), "POST /api/v1/embeddings")
  })
  // Background runs that declared themselves roots; everything else exported is under a request.
  const jobs = ["ledger.flush", "ledger.retention", "store.upkeep", "batch.line", "batch.lines"]
  const isRoot = (span: OtlpSpan) => span.parentSpanId === undefined || span.parentSpanId === ""

  it("exports no root span for 100 polls of /health and /metrics, and none for start-up or idle upkeep", async () => {
    const { call, gateway } = observed
    const origin = new URL(gateway.baseUrl).origin
    const before = spansOf(collector.received).length
    for (let i = 0; i < 100; i++) {
      assert.strictEqual((await fetch(`${origin}/api/v1/health`)).status, 200)
      assert.strictEqual((await fetch(`${origin}/metrics`)).status, 200)
    }
    // A traced request after the polls: once its span is exported, so is anything the polls made.
    const marker = "0af7651916cd43dd8448eb211c80319c"
    const models = await call("/models", undefined, { headers: { traceparent: `00-${marker}-b7ad6b7169203331-01` } })
    assert.strictEqual(models.status, 200)
    let spans: ReadonlyArray<OtlpSpan> = []
    await waitFor(() => {
      spans = spansOf(collector.received)
      return spans.some((s) => s.traceId === marker && s.kind === 2)
    })
    const polled = spans.slice(before).filter((s) => s.traceId !== marker)
    assert.deepStrictEqual(polled.filter((s) => isRoot(s) && !jobs.includes(s.name)).map((s) => s.name), [])
    assert.deepStrictEqual(polled.filter((s) => !jobs.includes(s.name) && !isRoot(s)).map((s) => s.name).filter((n) => /SELECT|holds/u.test(n)), [])
    // Since the start: every root is a request's server span or a background run that did something.
    const roots = spans.filter(isRoot)
    assert.deepStrictEqual(roots.filter((s) => s.kind !== 2 && !jobs.includes(s.name)).map((s) => s.name), [])
  })

  it("an upstream failure's spans name the provider and the reason", async () => {
    const { alpha, call } = observed
    const trace = "5e4f8c2d1b0a99887766554433221100"
    alpha.setBehaviour([{ _tag: "Status", status: 503 }])
    const reply = await call(
      "/embeddings",
      { model: "acme/embed", input: "fail me", provider: { only: ["alpha"], allow_fallbacks: false } },
      { headers: { traceparent: `00-${trace}-1111222233334444-01` } }
    )
    assert.strictEqual(reply.status, 503, JSON.stringify(reply.json))
    let spans: ReadonlyArray<OtlpSpan> = []
    const named = (name: string) => spans.filter((s) => s.traceId === trace && s.name === name)
    await waitFor(() => {
      spans = spansOf(collector.received)
      return named("POST /api/v1/embeddings").length === 1 && named("OpenAiCompatible.embed").length === 1
    })
    const server = named("POST /api/v1/embeddings")[0]!
    assert.strictEqual(server.status.code, 2)
    assert.strictEqual(attribute(server, "gen_ai.provider.name"), "alpha")
    assert.strictEqual(attribute(server, "error.type"), "Unavailable")
    assert.strictEqual(Number(attribute(server, "http.response.status_code")), 503)
    const attempt = named("Embeddings.attempt")[0]!
    assert.strictEqual(attribute(attempt, "gen_ai.provider.name"), "alpha")
    assert.strictEqual(attribute(attempt, "error.type"), "Unavailable")
    const adapter = named("OpenAiCompatible.embed")[0]!
    assert.strictEqual(adapter.status.code, 2)
    assert.strictEqual(attribute(adapter, "gen_ai.provider.name"), "alpha")
    assert.strictEqual(attribute(adapter, "error.type"), "Unavailable")
    assert.include(adapter.status.message, 'Provider "alpha"')
    for (const span of spans.filter((s) => s.traceId === trace)) assert.notInclude(span.status.message ?? "", 'Provider "upstream"')
  })

  it("a provider's credential, set and rotated through the API and sent upstream, is in no span and no log line", async () => {
    const { call, gateway, keys } = observed
    const [first, second] = ["sk-managed-trace-secret-51c7e0", "sk-managed-trace-rotated-9a44d2"]
    const upstream = await FakeOpenAi.start({ apiKey: second })
    try {
      const admin = (method: string, path: string, body?: unknown) =>
        fetch(`${gateway.baseUrl}${path}`, {
          method,
          headers: { authorization: `Bearer ${keys.managementKey}`, "content-type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) })
        }).then(async (response) => ({ status: response.status, text: await response.text() }))
      const created = await admin("POST", "/providers", {
        ...provider("traced", upstream.url, {}, [endpoint("traced/embed", { upstream_model: "embed" })]),
        api_key_env: undefined,
        api_key: first
      })
      assert.strictEqual(created.status, 201, created.text)
      // The first key is refused upstream, the rotated one served: both went out in requests.
      assert.strictEqual((await admin("POST", "/providers/traced/test")).status, 200)
      assert.strictEqual((await admin("PATCH", "/providers/traced", { api_key: second })).status, 200)
      assert.strictEqual((await admin("POST", "/providers/traced/test")).status, 200)
      const traceId = "7a3e5f0c2b9d4e6f8a1b3c5d7e9f0a2b"
      const served = await call("/embeddings", { model: "traced/embed", input: "secret keeping" }, {
        headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` }
      })
      assert.strictEqual(served.status, 200, JSON.stringify(served.json))
      assert.deepStrictEqual(upstream.requests.map((r) => r.headers.authorization).slice(0, 2), [`Bearer ${first}`, `Bearer ${second}`])
      await waitFor(() => spansOf(collector.received).some((s) => s.traceId === traceId && s.name === "Accounting.settle"))
      const exported = collector.received.map((r) => r.body.toString("utf8")).join("\n")
      assert.include(exported, "/api/v1/providers/traced")
      for (const secret of [first, second]) {
        assert.notInclude(exported, secret)
        assert.notInclude(gateway.output(), secret)
      }
    } finally {
      await upstream.close()
    }
  })

  it("a batch's lines: their spans and its start and end lines carry the batch's id", async () => {
    const { call, gateway, keys } = observed
    assert.strictEqual((await call("/credits", { amount: 5 }, { key: keys.managementKey })).status, 200)
    const input = ["one", "two", "three"]
      .map((text, i) => JSON.stringify({ custom_id: `t${i}`, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: text } }))
      .join("\n")
    const form = new FormData()
    form.append("purpose", "batch")
    form.append("file", new Blob([input]), "traced.jsonl")
    const upload = await fetch(`${gateway.baseUrl}/files`, { method: "POST", headers: { authorization: `Bearer ${keys.apiKey}` }, body: form })
    assert.strictEqual(upload.status, 200)
    const file = (await upload.json()) as { id: string }
    const created = await call("/batches", { input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    assert.strictEqual(created.status, 200, JSON.stringify(created.json))
    const batchId = created.json.id as string
    // At info a batch logs as a batch: its start and its end, with its id (each line is at debug).
    const logged = () => gateway.stdout().split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l)).filter((l) => l.batch_id === batchId)
    await waitFor(() => logged().some((l) => l.message === "batch finished"))
    assert.deepInclude(logged().find((l) => l.message === "batch started"), { lines: 3, units: 1 })
    assert.deepInclude(logged().find((l) => l.message === "batch finished"), { status: "completed", lines: 3, served: 3, failed: 0 })
    assert.strictEqual(logged().filter((l) => l.message === "batch line").length, 0)

    let spans: ReadonlyArray<OtlpSpan> = []
    await waitFor(() => {
      spans = spansOf(collector.received).filter((s) => attribute(s, "switchyard.batch_id") === batchId)
      return spans.some((s) => s.name === "batch.lines") && spans.some((s) => s.name === "Accounting.settle")
    })
    const group = spans.find((s) => s.name === "batch.lines")!
    assert.strictEqual(Number(attribute(group, "switchyard.batch_lines")), 3)
    // The spans under the group (the route, the upstream call, the settlements) carry the id too.
    const under = spans.filter((s) => s.traceId === group.traceId && s.spanId !== group.spanId)
    assert.isAbove(under.length, 0)
  })
})
