import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import parsePrometheus, { type Family } from "parse-prometheus-text-format"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

const token = "scrape-token-1f2e3d4c5b6a7980"
const dashboardPath = NodePath.join(import.meta.dirname, "..", "..", "..", "..", "deploy", "grafana", "switchyard.json")

const sampleValue = (families: ReadonlyArray<Family>, name: string, labels: Record<string, string> = {}): number => {
  // Series of one name that are not adjacent (a histogram's `_count` after each label set's
  // buckets) come back as several families.
  const named = families.filter((f) => f.name === name)
  if (named.length === 0) throw new Error(`no metric ${name}`)
  const matching = named.flatMap((f) => f.metrics).filter((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
  return matching.reduce((sum, m) => sum + Number(m.value), 0)
}

describe(`GET /metrics (${storeKind})`, () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let beta: FakeUpstream.FakeServer

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    beta = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })]),
          provider("beta", beta.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.2" } })])
        ]
      },
      env: { SWITCHYARD_RATE_LIMIT: "30/60s", SWITCHYARD_METRICS_TOKEN: token },
      credits: 10
    })
  })
  afterAll(async () => {
    await gateway?.close()
    await Promise.all([alpha?.close(), beta?.close()])
  })

  const scrape = async () => {
    const response = await fetch(`${gateway.server.origin}/metrics`, { headers: { authorization: `Bearer ${token}` } })
    assert.strictEqual(response.status, 200)
    assert.match(response.headers.get("content-type") ?? "", /^text\/plain; version=0\.0\.4/u)
    const text = await response.text()
    // The parser folds a labelled histogram's series into one unlabelled sample; read without the
    // HELP and TYPE comments, every series (`_bucket`, `_sum`, `_count` too) keeps its labels.
    const samples = parsePrometheus(text.split("\n").filter((line) => !line.startsWith("#")).join("\n"))
    return { text, families: parsePrometheus(text), samples }
  }

  it("needs SWITCHYARD_METRICS_TOKEN as a bearer when it is set, and answers 401 in the envelope otherwise", async () => {
    for (const headers of [{}, { authorization: "Bearer wrong-token" }, { authorization: token }] as Array<Record<string, string>>) {
      const response = await fetch(`${gateway.server.origin}/metrics`, { headers })
      assert.strictEqual(response.status, 401)
      const body = await response.json() as any
      assert.strictEqual(body.error.code, 401)
      assert.isString(body.error.message)
      assert.notInclude(JSON.stringify(body), token)
    }
    await scrape()
  })

  it("counts requests, latency, upstream attempts, fallbacks, tokens, cost, rate-limit refusals and open holds", async () => {
    const order = { order: ["alpha", "beta"] }
    const served: Array<any> = []
    for (const input of ["one", "two words", "three more words"]) {
      const reply = await gateway.embed({ model: "acme/embed", input, provider: order })
      assert.strictEqual(reply.status, 200, reply.text)
      served.push(reply.json)
    }
    // alpha fails once: "four" falls back to beta; alpha is then inside its outage window, so
    // "five" is served by beta without trying it, and "six" tries beta first.
    alpha.setBehaviour([{ _tag: "Status", status: 503 }])
    for (const input of ["four", "five"]) {
      const reply = await gateway.embed({ model: "acme/embed", input, provider: order })
      assert.strictEqual(reply.status, 200, reply.text)
      assert.strictEqual(reply.json.provider, "beta")
      served.push(reply.json)
    }
    alpha.setBehaviour({ _tag: "Status", status: 500 })
    beta.setBehaviour({ _tag: "Status", status: 500 })
    assert.strictEqual((await gateway.embed({ model: "acme/embed", input: "six", provider: order })).status, 502)
    alpha.setBehaviour({ _tag: "Normal" })
    beta.setBehaviour({ _tag: "Normal" })
    assert.strictEqual((await gateway.call("/no-such-route")).status, 404)

    // Another key spends its allowance: exactly one refusal.
    const created = await gateway.call("/keys", { name: "burst" }, { key: gateway.server.managementKey })
    assert.strictEqual(created.status, 201, created.text)
    let refusals = 0
    for (let i = 0; i < 400 && refusals === 0; i++) {
      if ((await gateway.call("/key", undefined, { key: created.json.key })).status === 429) refusals += 1
    }
    assert.strictEqual(refusals, 1)

    // A request in flight is admitted from the process's lease on its key; the gauge reads the lease from the store.
    // The upstream answers only once the gauge has been read: the request is in flight until then.
    let release = () => {}
    alpha.setBehaviour({ _tag: "Held", until: new Promise<void>((resolve) => (release = resolve)) })
    const slow = gateway.embed({ model: "acme/embed", input: "seven", provider: order })
    let held = 0
    for (let i = 0; i < 1000 && held === 0; i++) held = sampleValue((await scrape()).samples, "switchyard_holds_open")
    // In flight from at least here until the release: the duration histogram must hold that much.
    const seenInFlight = performance.now()
    await scrape()
    release()
    const heldSeconds = (performance.now() - seenInFlight) / 1000
    assert.strictEqual(held, 1)
    const slowReply = await slow
    assert.strictEqual(slowReply.status, 200, slowReply.text)
    served.push(slowReply.json)
    alpha.setBehaviour({ _tag: "Normal" })

    const { samples: families } = await scrape()
    const embeddings = { method: "POST", route: "/api/v1/embeddings" }
    assert.strictEqual(sampleValue(families, "switchyard_http_requests_total", { ...embeddings, status: "200" }), 6)
    assert.strictEqual(sampleValue(families, "switchyard_http_requests_total", { ...embeddings, status: "502" }), 1)
    assert.strictEqual(sampleValue(families, "switchyard_http_requests_total", { route: "unmatched", status: "404" }), 1)
    assert.strictEqual(sampleValue(families, "switchyard_http_requests_total", { route: "/api/v1/keys", status: "201" }), 1)
    assert.strictEqual(sampleValue(families, "switchyard_http_request_duration_seconds_count", { ...embeddings, status: "200" }), 6)
    assert.strictEqual(sampleValue(families, "switchyard_http_request_duration_seconds_bucket", { ...embeddings, status: "200", le: "+Inf" }), 6)
    assert.isAtLeast(
      sampleValue(families, "switchyard_http_request_duration_seconds_sum", { ...embeddings, status: "200" }),
      heldSeconds,
      "the held request's time in flight is in the histogram"
    )

    const attempts = (provider: string, outcome: string) => sampleValue(families, "switchyard_upstream_attempts_total", { provider, outcome })
    assert.strictEqual(attempts("alpha", "success"), 4)
    assert.strictEqual(attempts("alpha", "unavailable"), 1)
    assert.strictEqual(attempts("alpha", "server_error"), 1)
    assert.strictEqual(attempts("beta", "success"), 2)
    assert.strictEqual(attempts("beta", "server_error"), 1)
    assert.strictEqual(sampleValue(families, "switchyard_upstream_attempt_duration_seconds_count", { provider: "alpha" }), 6)
    assert.strictEqual(sampleValue(families, "switchyard_fallbacks_total", { model: "acme/embed", provider: "alpha" }), 1)
    assert.strictEqual(sampleValue(families, "switchyard_fallbacks_total", { provider: "beta" }), 1)

    for (const slug of ["alpha", "beta"]) {
      const mine = served.filter((r) => r.provider === slug)
      const tokens = mine.reduce((n, r) => n + r.usage.total_tokens, 0)
      const cost = mine.reduce((n, r) => n + r.usage.cost, 0)
      assert.strictEqual(sampleValue(families, "switchyard_tokens_total", { model: "acme/embed", provider: slug }), tokens)
      assert.closeTo(sampleValue(families, "switchyard_cost_usd_total", { model: "acme/embed", provider: slug, byok: "false" }), cost, 1e-12)
      assert.isAbove(cost, 0)
    }
    assert.strictEqual(sampleValue(families, "switchyard_rate_limit_refusals_total", { route: "/api/v1/key" }), 1)
    // The gauges read the store's holds at the scrape: this process's lease on the key, what its slice has left.
    const store = await gateway.server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return (yield* sql<{ n: number; nanos: string }>`SELECT CAST(count(*) AS integer) AS n, CAST(COALESCE(SUM(amount_nanos), 0) AS text) AS nanos
        FROM holds WHERE expires_at > ${new Date()}`)[0]!
    }))
    assert.strictEqual(sampleValue(families, "switchyard_holds_open"), store.n)
    assert.strictEqual(store.n, 1, "one lease: the one key that spent")
    assert.closeTo(sampleValue(families, "switchyard_holds_open_usd"), Number(store.nanos) / 1e9, 1e-12)
    for (const name of ["process_cpu_user_seconds_total", "process_resident_memory_bytes", "nodejs_heap_size_used_bytes", "nodejs_eventloop_lag_p99_seconds"]) {
      assert.isAbove(sampleValue(families, name), 0, name)
    }
  })

  it("every metric the Grafana dashboard queries is in the exposition", async () => {
    const dashboard = JSON.parse(Fs.readFileSync(dashboardPath, "utf8"))
    const expressions: Array<string> = dashboard.panels.flatMap((p: any) => (p.targets ?? []).map((t: any) => t.expr as string))
    assert.isAtLeast(expressions.length, 10)
    const { families } = await scrape()
    const exposed = new Map(families.map((f) => [f.name, f.type]))
    const queried = new Set(expressions.flatMap((e) => e.match(/\b(?:switchyard|process|nodejs)_[a-z0-9_]+/gu) ?? []))
    assert.isAtLeast(queried.size, 12)
    for (const name of queried) {
      const histogram = /^(.*)_(bucket|sum|count)$/u.exec(name)
      const known = exposed.has(name) || (histogram !== null && exposed.get(histogram[1]!) === "HISTOGRAM")
      assert.isTrue(known, `${name} is queried by the dashboard but not exposed`)
    }
    for (const name of exposed.keys()) {
      if (name.startsWith("switchyard_")) {
        assert.isTrue([...queried].some((q) => q.startsWith(name)), `${name} has no panel`)
      }
    }
  })
})

describe(`GET /metrics: the embeddings cache (${storeKind})`, () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let beta: FakeUpstream.FakeServer

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    beta = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })]),
          provider("beta", beta.url, {}, [endpoint("acme/fallback", { upstream_model: "embed", pricing: { prompt: "0.1" } })]),
          provider("gamma", beta.url, {}, [endpoint("acme/fallback", { upstream_model: "embed", pricing: { prompt: "0.2" } })])
        ],
        workspaces: { default: { cache: true } }
      },
      credits: 10
    })
  })
  afterAll(async () => {
    await gateway?.close()
    await Promise.all([alpha?.close(), beta?.close()])
  })

  const counters = async () => {
    const response = await fetch(`${gateway.server.origin}/metrics`)
    assert.strictEqual(response.status, 200)
    const samples = parsePrometheus((await response.text()).split("\n").filter((line) => !line.startsWith("#")).join("\n"))
    const read = (name: string, labels: Record<string, string>) =>
      samples.some((f) => f.name === name) ? sampleValue(samples, name, labels) : 0
    return {
      attempts: (provider: string, outcome: string) => read("switchyard_upstream_attempts_total", { provider, outcome }),
      fallbackHits: read("switchyard_embedding_cache_hits_total", { model: "acme/fallback" }),
      fallbackMisses: read("switchyard_embedding_cache_misses_total", { model: "acme/fallback" }),
      hits: read("switchyard_embedding_cache_hits_total", { model: "acme/embed" }),
      misses: read("switchyard_embedding_cache_misses_total", { model: "acme/embed" }),
      read: read("switchyard_embedding_cache_bytes_total", { direction: "read" }),
      written: read("switchyard_embedding_cache_bytes_total", { direction: "write" })
    }
  }
  it("cached tokens are counted apart: the provider's upstream tokens do not grow by a hit", async () => {
    const tokens = async () => {
      const response = await fetch(`${gateway.server.origin}/metrics`)
      const samples = parsePrometheus((await response.text()).split("\n").filter((line) => !line.startsWith("#")).join("\n"))
      const read = (name: string) => samples.some((f) => f.name === name) ? sampleValue(samples, name, { model: "acme/embed", provider: "alpha" }) : 0
      return { upstream: read("switchyard_tokens_total"), cached: read("switchyard_cached_tokens_total") }
    }
    const body = { model: "acme/embed", input: ["counted apart once", "counted apart twice"] }
    const start = await tokens()
    const miss = await gateway.embed(body)
    assert.strictEqual(miss.headers.get("x-switchyard-cache"), "miss")
    const afterMiss = await tokens()
    assert.strictEqual(afterMiss.upstream - start.upstream, miss.json.usage.prompt_tokens)
    assert.strictEqual(afterMiss.cached, start.cached)
    const hit = await gateway.embed(body)
    assert.strictEqual(hit.headers.get("x-switchyard-cache"), "hit")
    const afterHit = await tokens()
    assert.strictEqual(afterHit.upstream, afterMiss.upstream)
    assert.strictEqual(afterHit.cached - afterMiss.cached, hit.json.usage.prompt_tokens)
    assert.isAbove(hit.json.usage.prompt_tokens, 0)
  })

  const delta = (before: Awaited<ReturnType<typeof counters>>, after: Awaited<ReturnType<typeof counters>>) => ({
    hits: after.hits - before.hits,
    misses: after.misses - before.misses,
    read: after.read - before.read,
    written: after.written - before.written
  })
  // The vectors' text exactly as the answer carries them (the cache keeps the upstream's text).
  const vectorBytes = (text: string) => [...text.matchAll(/"embedding":(\[[^\]]*\])/gu)].reduce((n, m) => n + m[1]!.length, 0)

  it("a miss counts the items that went upstream and the bytes written; the same input again counts hits and the bytes read", async () => {
    const body = { model: "acme/embed", input: ["metrics one", "metrics two"] }
    const start = await counters()
    const first = await gateway.embed(body)
    assert.strictEqual(first.status, 200, first.text)
    assert.strictEqual(first.headers.get("x-switchyard-cache"), "miss")
    const bytes = vectorBytes(first.text)
    assert.isAbove(bytes, 0)
    const afterMiss = await counters()
    assert.deepStrictEqual(delta(start, afterMiss), { hits: 0, misses: 2, read: 0, written: bytes })

    const second = await gateway.embed(body)
    assert.strictEqual(second.status, 200, second.text)
    assert.strictEqual(second.headers.get("x-switchyard-cache"), "hit")
    assert.strictEqual(vectorBytes(second.text), bytes)
    const afterHit = await counters()
    assert.deepStrictEqual(delta(afterMiss, afterHit), { hits: 2, misses: 0, read: bytes, written: 0 })

    // One item cached, one not: one hit, one miss.
    const third = await gateway.embed({ model: "acme/embed", input: ["metrics one", "metrics three"] })
    assert.strictEqual(third.headers.get("x-switchyard-cache"), "partial")
    const afterPartial = await counters()
    const moved = delta(afterHit, afterPartial)
    assert.strictEqual(moved.hits, 1)
    assert.strictEqual(moved.misses, 1)
    assert.strictEqual(moved.read + moved.written, vectorBytes(third.text))

    // A bypass neither reads nor writes: nothing moves.
    const bypass = await gateway.embed(body, { headers: { "x-switchyard-cache": "bypass" } })
    assert.strictEqual(bypass.headers.get("x-switchyard-cache"), "bypass")
    assert.deepStrictEqual(delta(afterPartial, await counters()), { hits: 0, misses: 0, read: 0, written: 0 })
  })

  it("a hit is no upstream attempt, and a miss served after a fallback counts each item once", async () => {
    const start = await counters()
    const body = { model: "acme/embed", input: ["attempt one", "attempt two"] }
    assert.strictEqual((await gateway.embed(body)).status, 200)
    const hit = await gateway.embed(body)
    assert.strictEqual(hit.headers.get("x-switchyard-cache"), "hit")
    const afterHit = await counters()
    assert.strictEqual(afterHit.attempts("alpha", "success") - start.attempts("alpha", "success"), 1, "only the miss called the upstream")
    assert.strictEqual(afterHit.hits - start.hits, 2)

    // beta fails, gamma serves: two attempts, but each of the three items is one miss.
    beta.setBehaviour([{ _tag: "Status", status: 503 }])
    const fallback = await gateway.embed({ model: "acme/fallback", input: ["fb one", "fb two", "fb three"], provider: { order: ["beta", "gamma"] } })
    assert.strictEqual(fallback.status, 200, fallback.text)
    assert.strictEqual(fallback.json.provider, "gamma")
    const afterFallback = await counters()
    assert.strictEqual(afterFallback.fallbackMisses - afterHit.fallbackMisses, 3)
    assert.strictEqual(afterFallback.fallbackHits - afterHit.fallbackHits, 0)
    assert.strictEqual(afterFallback.attempts("beta", "unavailable") - afterHit.attempts("beta", "unavailable"), 1)
    assert.strictEqual(afterFallback.attempts("gamma", "success") - afterHit.attempts("gamma", "success"), 1)
  })
})
