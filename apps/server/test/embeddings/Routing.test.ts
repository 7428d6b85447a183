import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"
import { costOf, endpoint, type Gateway, lastBody, provider, type Reply, servedBy, startGateway } from "./Gateway.ts"

type Slug = "alpha" | "beta" | "gamma"

const facts: Record<Slug, { readonly provider: Record<string, unknown>; readonly endpoint: Record<string, unknown> }> = {
  alpha: {
    provider: { data_collection: "allow", zdr: false },
    endpoint: {
      pricing: { prompt: "0.1" },
      quantization: "fp32",
      distillable: false,
      supported_parameters: ["dimensions", "encoding_format", "input_type", "user"]
    }
  },
  beta: {
    provider: { data_collection: "deny", zdr: false },
    endpoint: { pricing: { prompt: "0.02" }, quantization: "fp16", supported_parameters: ["encoding_format"] }
  },
  gamma: {
    provider: { data_collection: "deny", zdr: true },
    endpoint: { pricing: { prompt: "0.05" }, quantization: "int8", supported_parameters: ["dimensions", "encoding_format"] }
  }
}

const price: Record<Slug, string> = { alpha: "0.1", beta: "0.02", gamma: "0.05" }
const perfPrice: Record<Slug, string> = { alpha: "0.03", beta: "0.01", gamma: "0.02" }
const slugs: ReadonlyArray<Slug> = ["alpha", "beta", "gamma"]
const input = "one two three"

describe("embeddings routing over three fake upstreams", () => {
  let gateway: Gateway
  const fakes = {} as Record<Slug, FakeUpstream.FakeServer>

  beforeAll(async () => {
    for (const slug of slugs) fakes[slug] = await FakeOpenAi.start()
    const providers = slugs.map((slug) =>
      provider(slug, fakes[slug].url, facts[slug].provider, [
        ...["acme/embed", "acme/fail", "acme/draw"].map((m) => endpoint(m, { ...facts[slug].endpoint, upstream_model: "embed" })),
        endpoint("acme/perf", { upstream_model: "embed", pricing: { prompt: perfPrice[slug] } }),
        ...(slug === "alpha"
          ? [
            endpoint("acme/wide", { upstream_model: "embed", quantization: "fp32" }),
            endpoint("acme/twin", { upstream_model: "embed", quantization: "fp16" })
          ]
          : []),
        ...(slug === "gamma"
          ? [
            endpoint("acme/wide", { upstream_model: "text-embedding-3-small", dimensions: 1536, quantization: "fp32", pricing: { prompt: "0.02" } }),
            endpoint("acme/twin", { upstream_model: "embed", quantization: "fp16", pricing: { prompt: "0.02" } })
          ]
          : [])
      ])
    )
    const delta = provider("delta", fakes.gamma.url, { api_key_env: "DELTA_KEY_NOT_SET" }, [endpoint("acme/draw")])
    gateway = await startGateway({ config: { providers: [...providers, delta] }, credits: 100 })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all(slugs.map((slug) => fakes[slug].close()))
  })
  afterEach(() => {
    for (const slug of slugs) fakes[slug].setBehaviour(FakeUpstream.normal)
  })

  const counts = () => Object.fromEntries(slugs.map((slug) => [slug, fakes[slug].requests.length])) as Record<Slug, number>

  const expectServed = (reply: Reply, slug: Slug, before: Record<Slug, number>, prices = price, text = input) => {
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(servedBy(reply), slug)
    const after = counts()
    for (const other of slugs) assert.strictEqual(after[other] - before[other], other === slug ? 1 : 0, `${other} requests`)
    assert.strictEqual(reply.json.usage.prompt_tokens, FakeUpstream.wordCount(text))
    assert.strictEqual(reply.json.usage.cost, costOf(reply.json.usage.prompt_tokens, prices[slug]))
    assert.strictEqual(reply.json.usage.cost_details.upstream_inference_cost, reply.json.usage.cost)
  }

  const served = async (
    preferences: Record<string, unknown>,
    extra: Record<string, unknown> = {},
    model = "acme/embed",
    text = input
  ) => {
    const before = counts()
    const reply = await gateway.embed({ model, input: text, provider: preferences, ...extra })
    return { reply, before }
  }

  const cases: ReadonlyArray<{
    readonly field: string
    readonly base: Record<string, unknown>
    readonly withField: Record<string, unknown>
    readonly from: Slug
    readonly to: Slug
    readonly extra?: Record<string, unknown>
  }> = [
    { field: "order", base: { sort: "price" }, withField: { sort: "price", order: ["gamma"] }, from: "beta", to: "gamma" },
    { field: "only", base: { sort: "price" }, withField: { sort: "price", only: ["alpha"] }, from: "beta", to: "alpha" },
    { field: "ignore", base: { sort: "price" }, withField: { sort: "price", ignore: ["beta"] }, from: "beta", to: "gamma" },
    { field: "sort", base: { sort: "price" }, withField: { sort: { by: "exacto", partition: "none" } }, from: "beta", to: "alpha" },
    {
      field: "data_collection",
      base: { order: ["alpha", "beta", "gamma"] },
      withField: { order: ["alpha", "beta", "gamma"], data_collection: "deny" },
      from: "alpha",
      to: "beta"
    },
    {
      field: "zdr",
      base: { order: ["alpha", "beta", "gamma"] },
      withField: { order: ["alpha", "beta", "gamma"], zdr: true },
      from: "alpha",
      to: "gamma"
    },
    {
      field: "enforce_distillable_text",
      base: { order: ["alpha", "beta", "gamma"] },
      withField: { order: ["alpha", "beta", "gamma"], enforce_distillable_text: true },
      from: "alpha",
      to: "beta"
    },
    {
      field: "quantizations",
      base: { order: ["alpha", "beta", "gamma"] },
      withField: { order: ["alpha", "beta", "gamma"], quantizations: ["int8"] },
      from: "alpha",
      to: "gamma"
    },
    {
      field: "max_price",
      base: { order: ["alpha", "gamma", "beta"] },
      withField: { order: ["alpha", "gamma", "beta"], max_price: { prompt: "0.03" } },
      from: "alpha",
      to: "beta"
    },
    {
      field: "require_parameters",
      base: { order: ["beta", "gamma", "alpha"] },
      withField: { order: ["beta", "gamma", "alpha"], require_parameters: true },
      from: "beta",
      to: "gamma",
      extra: { dimensions: 16 }
    }
  ]

  for (const c of cases) {
    it(`provider.${c.field} changes the serving provider (${c.from} -> ${c.to})`, async () => {
      const base = await served(c.base, c.extra)
      expectServed(base.reply, c.from, base.before)
      const changed = await served(c.withField, c.extra)
      expectServed(changed.reply, c.to, changed.before)
    })
  }

  it("require_parameters off: an endpoint that cannot take a parameter gets the request without it", async () => {
    const { reply, before } = await served({ order: ["beta"] }, { dimensions: 16, user: "u-1" })
    expectServed(reply, "beta", before)
    const sent = lastBody(fakes.beta)
    assert.notProperty(sent, "dimensions")
    assert.notProperty(sent, "user")
  })

  it("a failing primary falls back to the next provider, which is the one charged", async () => {
    fakes.alpha.setBehaviour([{ _tag: "Status", status: 500 }])
    const before = counts()
    const reply = await gateway.embed(
      { model: "acme/fail", input, provider: { order: ["alpha", "gamma"] } },
      { headers: { "x-switchyard-explain": "true" } }
    )
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(servedBy(reply), "gamma")
    assert.strictEqual(counts().alpha - before.alpha, 1)
    assert.strictEqual(reply.json.usage.cost, costOf(3, price.gamma))
    const tried = reply.json.switchyard.routing.tried
    assert.deepStrictEqual(tried.map((t: any) => [t.provider, t.outcome, t.reason, t.status]), [
      ["alpha", "failure", "ServerError", 502],
      ["gamma", "success", undefined, undefined]
    ])
    assert.deepStrictEqual(reply.json.switchyard.vector_space_change, {
      primary: "alpha/default@acme/fail",
      primary_dimensions: 16,
      primary_quantization: "fp32",
      served_by: "gamma/default@acme/fail",
      dimensions: 16,
      quantization: "int8"
    })
  })

  it("allow_fallbacks=false returns the primary's upstream error; true moves on", async () => {
    fakes.alpha.setBehaviour({ _tag: "Status", status: 503 })
    const before = counts()
    const refused = await gateway.embed({ model: "acme/fail", input, provider: { order: ["alpha"], allow_fallbacks: false } })
    assert.strictEqual(refused.status, 503, refused.text)
    assert.strictEqual(refused.json.error.code, 503)
    assert.strictEqual(refused.json.error.metadata.provider_name, "alpha")
    assert.strictEqual(refused.json.error.metadata.reason, "Unavailable")
    assert.strictEqual(refused.json.error.metadata.upstream_status, 503)
    assert.deepStrictEqual(counts(), { ...before, alpha: before.alpha + 1 })

    const rescued = await gateway.embed({ model: "acme/fail", input, provider: { order: ["alpha"], allow_fallbacks: true } })
    assert.strictEqual(rescued.status, 200, rescued.text)
    assert.strictEqual(servedBy(rescued), "beta")
  })

  it("a fallback into another vector width is reported; one within the same space is not", async () => {
    fakes.alpha.setBehaviour([{ _tag: "Status", status: 500 }])
    const wide = await gateway.embed({ model: "acme/wide", input, provider: { order: ["alpha", "gamma"] } })
    assert.strictEqual(wide.status, 200, wide.text)
    assert.strictEqual(wide.json.data[0].embedding.length, 1536)
    assert.deepInclude(wide.json.switchyard.vector_space_change, {
      primary: "alpha/default@acme/wide",
      primary_dimensions: 16,
      served_by: "gamma/default@acme/wide",
      dimensions: 1536
    })

    fakes.alpha.setBehaviour([{ _tag: "Status", status: 500 }])
    const twin = await gateway.embed({ model: "acme/twin", input, provider: { order: ["alpha", "gamma"] } })
    assert.strictEqual(twin.status, 200, twin.text)
    assert.strictEqual(servedBy(twin), "gamma")
    assert.notProperty(twin.json, "switchyard")
  })

  it("latency and throughput preferences follow the measured performance", async () => {
    fakes.beta.setBehaviour({ _tag: "Delay", ms: 300 })
    fakes.gamma.setBehaviour({ _tag: "Delay", ms: 500 })
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ")
    const perf = (preferences: Record<string, unknown>) => served(preferences, {}, "acme/perf", words)
    for (const slug of slugs) {
      const warm = await perf({ order: [slug], allow_fallbacks: false })
      expectServed(warm.reply, slug, warm.before, perfPrice, words)
    }
    const cheapest = await perf({ sort: "price" })
    expectServed(cheapest.reply, "beta", cheapest.before, perfPrice, words)
    for (
      const preferences of [
        { sort: "latency" },
        { sort: "throughput" },
        { sort: "price", preferred_max_latency: 0.2 },
        { sort: "price", preferred_max_latency: { p50: 0.2, p90: 0.2 } },
        { sort: "price", preferred_min_throughput: 200 },
        { sort: "price", preferred_min_throughput: { p50: 200 } }
      ]
    ) {
      const { reply, before } = await perf(preferences)
      assert.strictEqual(servedBy(reply), "alpha", JSON.stringify(preferences))
      expectServed(reply, "alpha", before, perfPrice, words)
    }
  })

  it("x-switchyard-explain lists every candidate, each exclusion's filter, the weights, the seed and every attempt", async () => {
    const reply = await gateway.embed(
      { model: "acme/draw", input, provider: { ignore: ["gamma"] } },
      { headers: { "x-switchyard-explain": "true", "x-switchyard-seed": "42" } }
    )
    assert.strictEqual(reply.status, 200, reply.text)
    const routing = reply.json.switchyard.routing
    assert.strictEqual(routing.seed, 42)
    assert.strictEqual(routing.mode, "default")
    assert.isNumber(routing.draw.u)
    assert.sameMembers(routing.draw.pool, ["alpha/default@acme/draw", "beta/default@acme/draw"])
    const byId = Object.fromEntries(routing.candidates.map((c: any) => [c.id, c]))
    assert.sameMembers(Object.keys(byId), [
      "alpha/default@acme/draw",
      "beta/default@acme/draw",
      "gamma/default@acme/draw",
      "delta/default@acme/draw"
    ])
    assert.strictEqual(byId["gamma/default@acme/draw"].excluded_by, "ignore")
    assert.strictEqual(byId["delta/default@acme/draw"].excluded_by, "inactive")
    const alpha = byId["alpha/default@acme/draw"]
    const beta = byId["beta/default@acme/draw"]
    assert.closeTo(beta.weight / alpha.weight, 25, 1e-9)
    assert.closeTo(alpha.weight + beta.weight, 1, 1e-9)
    assert.deepStrictEqual(routing.attempts, [alpha, beta].sort((a, b) => a.rank - b.rank).map((c) => c.id))
    assert.deepStrictEqual(routing.tried.map((t: any) => [t.endpoint, t.outcome]), [[routing.attempts[0], "success"]])
    assert.strictEqual(servedBy(reply), routing.attempts[0].split("/")[0])

    const sorted = await gateway.embed(
      { model: "acme/draw", input, provider: { sort: "price" } },
      { headers: { "x-switchyard-explain": "1" } }
    )
    const keys = Object.fromEntries(sorted.json.switchyard.routing.candidates.map((c: any) => [c.provider, c.sort_key]))
    assert.deepStrictEqual(keys, { beta: "0.02", gamma: "0.05", alpha: "0.1", delta: undefined })
    assert.strictEqual(sorted.json.switchyard.routing.mode, "sort")

    const plain = await gateway.embed({ model: "acme/draw", input })
    assert.notProperty(plain.json, "switchyard")
  })

  it("x-switchyard-seed makes the random draw reproducible", async () => {
    const primaryOf = async (seed: number) => {
      const plan = await gateway.call("/embeddings/plan", { model: "acme/draw", input }, { headers: { "x-switchyard-seed": String(seed) } })
      assert.strictEqual(plan.status, 200, plan.text)
      return plan.json.attempts[0].split("/")[0] as Slug
    }
    const seedFor: Partial<Record<Slug, number>> = {}
    for (let seed = 0; seed < 2000 && Object.keys(seedFor).length < 3; seed++) seedFor[await primaryOf(seed)] ??= seed
    assert.sameMembers(Object.keys(seedFor), slugs as Array<string>)
    for (const slug of slugs) {
      const seed = String(seedFor[slug])
      const first = await gateway.embed({ model: "acme/draw", input }, { headers: { "x-switchyard-seed": seed, "x-switchyard-explain": "true" } })
      const again = await gateway.embed({ model: "acme/draw", input }, { headers: { "x-switchyard-seed": seed, "x-switchyard-explain": "true" } })
      assert.strictEqual(servedBy(first), slug)
      assert.strictEqual(servedBy(again), slug)
      assert.strictEqual(first.headers.get("x-switchyard-seed"), seed)
      assert.strictEqual(first.json.switchyard.routing.draw.u, again.json.switchyard.routing.draw.u)
      assert.deepStrictEqual(first.json.switchyard.routing.attempts, again.json.switchyard.routing.attempts)
    }
    const unseeded = await gateway.embed({ model: "acme/draw", input })
    assert.match(unseeded.headers.get("x-switchyard-seed") ?? "", /^\d+$/)
    const bad = await gateway.embed({ model: "acme/draw", input }, { headers: { "x-switchyard-seed": "-1" } })
    assert.strictEqual(bad.status, 400)
    assert.strictEqual(bad.json.error.code, 400)
    assert.include(bad.json.error.message, "x-switchyard-seed")
  })

  it("POST /embeddings/plan gives the same plan with the token and cost estimate, without calling upstream", async () => {
    const body = { model: "acme/draw", input: ["hello world", "again"], provider: { ignore: ["alpha"] } }
    const headers = { "x-switchyard-seed": "7" }
    const before = counts()
    const plan = await gateway.call("/embeddings/plan", body, { headers })
    assert.strictEqual(plan.status, 200, plan.text)
    assert.deepStrictEqual(counts(), before)
    assert.strictEqual(plan.json.object, "embeddings.plan")
    const bound = Buffer.byteLength("hello world") + Buffer.byteLength("again")
    assert.strictEqual(plan.json.estimate.prompt_tokens, bound)
    const primary = plan.json.attempts[0].split("/")[0] as Slug
    assert.strictEqual(plan.json.estimate.cost, costOf(bound, price[primary]))
    assert.strictEqual(plan.json.explanation.seed, 7)
    assert.strictEqual(
      plan.json.explanation.candidates.find((c: any) => c.provider === "alpha").excluded_by,
      "ignore"
    )

    const real = await gateway.embed(body, { headers: { ...headers, "x-switchyard-explain": "true" } })
    assert.strictEqual(real.status, 200, real.text)
    assert.deepStrictEqual(real.json.switchyard.routing.attempts, plan.json.attempts)
    assert.deepStrictEqual(real.json.switchyard.routing.draw, plan.json.explanation.draw)
    assert.strictEqual(servedBy(real), primary)

    const unknown = await gateway.call("/embeddings/plan", { model: "acme/nothing", input: "x" })
    assert.strictEqual(unknown.status, 404)
    assert.strictEqual(unknown.json.error.code, 404)
    const management = await gateway.call("/embeddings/plan", body, { key: gateway.server.managementKey })
    assert.strictEqual(management.status, 403)
    assert.strictEqual(management.json.error.code, 403)
  })
})

describe("workspace provider settings merged with the request's provider object", () => {
  let fake: FakeUpstream.FakeServer
  let gateway: Gateway
  const providersOf = (url: string) => [
    provider("alpha", url, { data_collection: "allow", zdr: false }, [endpoint("acme/embed", { pricing: { prompt: "0.1" } })]),
    provider("beta", url, { data_collection: "deny", zdr: false }, [endpoint("acme/embed", { pricing: { prompt: "0.02" } })]),
    provider("gamma", url, { data_collection: "deny", zdr: true }, [endpoint("acme/embed", { pricing: { prompt: "0.05" } })]),
    provider("delta", url, { data_collection: "allow", zdr: true }, [endpoint("acme/embed", { pricing: { prompt: "0.01" } })])
  ]

  // Both tests run on one store (the second restarts the gateway over the first's data).
  let databaseUrl: string | undefined

  beforeAll(async () => {
    fake = await FakeOpenAi.start()
    databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
  })
  afterAll(async () => {
    await gateway?.close()
    await fake.close()
    if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
  })

  const ask = (preferences: Record<string, unknown> = {}) =>
    gateway.embed({ model: "acme/embed", input, provider: preferences }, { headers: { "x-switchyard-explain": "true" } })

  const exclusions = (reply: Reply): Record<string, string> => {
    const candidates = reply.status === 200 ? reply.json.switchyard.routing.candidates : reply.json.error.metadata.candidates
    return Object.fromEntries(candidates.filter((c: any) => c.excluded_by !== undefined).map((c: any) => [c.provider, c.excluded_by]))
  }

  it("only is intersected, ignore united, and a request cannot loosen data_collection deny; zdr tightens", async () => {
    gateway = await startGateway({
      config: {
        providers: providersOf(fake.url),
        workspaces: { default: { only: ["alpha", "beta", "delta"], ignore: ["delta"], data_collection: "deny", zdr: false } }
      },
      ...(databaseUrl !== undefined ? { databaseUrl } : {}),
      credits: 10
    })
    const plain = await ask()
    assert.strictEqual(servedBy(plain), "beta")
    assert.deepStrictEqual(exclusions(plain), { alpha: "data_collection", gamma: "workspace_only", delta: "ignore" })

    const widened = await ask({ only: ["gamma"] })
    assert.strictEqual(widened.status, 404, widened.text)
    assert.strictEqual(exclusions(widened).gamma, "workspace_only")

    const narrowed = await ask({ only: ["alpha", "beta"] })
    assert.strictEqual(servedBy(narrowed), "beta")

    const united = await ask({ ignore: ["beta"] })
    assert.strictEqual(united.status, 404, united.text)
    assert.deepStrictEqual(exclusions(united), { alpha: "data_collection", beta: "ignore", gamma: "workspace_only", delta: "ignore" })

    const loosened = await ask({ data_collection: "allow" })
    assert.strictEqual(servedBy(loosened), "beta")
    assert.strictEqual(exclusions(loosened).alpha, "data_collection")

    const tightened = await ask({ zdr: true })
    assert.strictEqual(tightened.status, 404, tightened.text)
    assert.strictEqual(exclusions(tightened).beta, "zdr")
  })

  it("a request cannot turn off the workspace's zdr or un-ignore a provider; data_collection deny tightens", async () => {
    const { dataDir, apiKey, managementKey } = gateway.server
    await gateway.close()
    gateway = await startGateway({
      config: {
        providers: providersOf(fake.url),
        workspaces: { default: { only: null, ignore: ["gamma"], data_collection: "allow", zdr: true } }
      },
      dataDir,
      ...(databaseUrl !== undefined ? { databaseUrl } : {}),
      keys: { apiKey, managementKey }
    })
    const plain = await ask({ sort: "price" })
    assert.strictEqual(servedBy(plain), "delta")
    assert.deepStrictEqual(exclusions(plain), { alpha: "zdr", beta: "zdr", gamma: "ignore" })

    const loosened = await ask({ zdr: false })
    assert.strictEqual(servedBy(loosened), "delta")
    assert.deepStrictEqual(exclusions(loosened), { alpha: "zdr", beta: "zdr", gamma: "ignore" })

    const unignored = await ask({ only: ["gamma"], ignore: [] })
    assert.strictEqual(unignored.status, 404, unignored.text)
    assert.strictEqual(exclusions(unignored).gamma, "ignore")

    const tightened = await ask({ data_collection: "deny" })
    assert.strictEqual(tightened.status, 404, tightened.text)
    assert.strictEqual(exclusions(tightened).delta, "data_collection")
  })
})
