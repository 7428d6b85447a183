import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { decodeFloat32, endpoint, type Gateway, provider, type Reply, startGateway } from "../embeddings/Gateway.ts"

const texts = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `${prefix} number ${i}`)

// The JSON text of each vector as the gateway wrote it.
const vectorTexts = (reply: Reply): Array<string> => (reply.json.data as Array<{ embedding: unknown }>).map((d) => JSON.stringify(d.embedding))

const cacheOf = (reply: Reply) => reply.headers.get("x-switchyard-cache")

describe("embeddings cache", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  // The upstream requests of the current test.
  let mark = 0
  const sent = () => alpha.requests.slice(mark)
  const upstreamInputs = () => sent().map((r) => (r.body as { input: ReadonlyArray<string> | string }).input)

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, { zdr: true }, [
            endpoint("acme/embed", {
              upstream_model: "embed",
              pricing: { prompt: "0.1" },
              max_batch_items: 3,
              supported_parameters: ["dimensions", "encoding_format", "input_type", "user"]
            }),
            endpoint("acme/other", { upstream_model: "embed", pricing: { prompt: "0.1" } }),
            // Matryoshka without native dimensions, a limit of 4 tokens: the gateway cuts, types and windows.
            endpoint("acme/nested", { upstream_model: "nested", pricing: { prompt: "0.1" }, matryoshka: true, max_input_tokens: 4 })
          ])
        ],
        workspaces: { default: { cache: true } }
      },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await alpha.close()
  })
  afterEach(() => {
    mark = alpha.requests.length
  })

  it("calls the upstream once for the same input twice; the second answer costs nothing and carries the same vectors", async () => {
    const body = { model: "acme/embed", input: ["the same text twice"] }
    const first = await gateway.embed(body)
    const second = await gateway.embed(body)
    assert.strictEqual(first.status, 200, first.text)
    assert.strictEqual(second.status, 200, second.text)
    assert.strictEqual(sent().length, 1)
    assert.strictEqual(cacheOf(first), "miss")
    assert.strictEqual(cacheOf(second), "hit")
    assert.deepStrictEqual(vectorTexts(second), vectorTexts(first))
    assert.isAbove(first.json.usage.cost, 0)
    assert.strictEqual(second.json.usage.cost, 0)
    assert.strictEqual(second.json.usage.prompt_tokens, first.json.usage.prompt_tokens)
    assert.strictEqual(second.headers.get("x-switchyard-cached-items"), "1")
    assert.deepStrictEqual(second.json.switchyard.cache, { status: "hit", items: 1, tokens: first.json.usage.prompt_tokens })
    assert.isUndefined(first.json.switchyard)
  })

  it("sends only the uncached items of a batch upstream, still split by max_batch_items, and keeps every index", async () => {
    const all = texts(10, "partial")
    const cachedAt = [0, 2, 3, 5, 7, 9]
    const warm = await gateway.embed({ model: "acme/embed", input: cachedAt.map((i) => all[i]!) })
    assert.strictEqual(warm.status, 200, warm.text)
    mark = alpha.requests.length

    const reply = await gateway.embed({ model: "acme/embed", input: all })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(cacheOf(reply), "partial")
    assert.strictEqual(reply.headers.get("x-switchyard-cached-items"), "6")
    const inputs = upstreamInputs()
    assert.deepStrictEqual(inputs.flatMap((input) => typeof input === "string" ? [input] : [...input]), [1, 4, 6, 8].map((i) => all[i]!))
    assert.isTrue(inputs.every((input) => input.length <= 3))
    const data = reply.json.data as Array<{ index: number; embedding: Array<number> }>
    assert.deepStrictEqual(data.map((d) => d.index), all.map((_, i) => i))
    data.forEach((d, i) => {
      assert.deepStrictEqual(d.embedding, FakeUpstream.vectorFor(`embed|${all[i]}`, 16).map(Math.fround))
    })

    const alone = await gateway.embed({ model: "acme/embed", input: [all[1]!, all[4]!, all[6]!, all[8]!] })
    assert.strictEqual(cacheOf(alone), "hit")
  })

  it("bills only the items that went upstream", async () => {
    const all = texts(4, "billing")
    await gateway.embed({ model: "acme/embed", input: all.slice(0, 2) })
    const fresh = await gateway.embed({ model: "acme/embed", input: all.slice(2), provider: { zdr: false } }, { headers: { "x-switchyard-cache": "bypass" } })
    const mixed = await gateway.embed({ model: "acme/embed", input: all })
    assert.strictEqual(cacheOf(mixed), "partial")
    assert.strictEqual(mixed.json.usage.cost, fresh.json.usage.cost)
  })

  it("never shares an entry between dimensions, models or input types", async () => {
    const input = ["one vector space each"]
    const replies = [
      await gateway.embed({ model: "acme/embed", input }),
      await gateway.embed({ model: "acme/embed", input, dimensions: 8 }),
      await gateway.embed({ model: "acme/other", input }),
      await gateway.embed({ model: "acme/embed", input, input_type: "search_query" })
    ]
    assert.deepStrictEqual(replies.map(cacheOf), ["miss", "miss", "miss", "miss"])
    assert.strictEqual(sent().length, 4)
    assert.strictEqual(replies[1]!.json.data[0].embedding.length, 8)
  })

  it("a hit never answers a vector a miss would not have: width, type and truncation are part of what is kept or derived", async () => {
    const text = "one two three four five six seven eight nine ten"
    const asks = [
      { dimensions: 8 },
      { dimensions: 4 },
      { dimensions: 8, output_dtype: "int8" },
      { dimensions: 8, output_dtype: "binary", encoding_format: "base64" },
      { dimensions: 8, truncate: "end" },
      { dimensions: 8, truncate: "chunk" },
      { dimensions: 8, truncate: "chunk", output_dtype: "uint8" }
    ]
    for (const ask of asks) {
      const body = { model: "acme/nested", input: [text], ...ask }
      // A miss with the cache bypassed is what the request answers; the cached answer must be it.
      const fresh = await gateway.embed(body, { headers: { "x-switchyard-cache": "bypass" } })
      const first = await gateway.embed(body)
      const again = await gateway.embed(body)
      assert.strictEqual(fresh.status, 200, `${JSON.stringify(ask)}: ${fresh.text}`)
      assert.strictEqual(cacheOf(again), "hit", JSON.stringify(ask))
      assert.deepStrictEqual(vectorTexts(first), vectorTexts(fresh), JSON.stringify(ask))
      assert.deepStrictEqual(vectorTexts(again), vectorTexts(fresh), JSON.stringify(ask))
    }
  })

  it("returns a cached vector in the encoding asked for, the same float32 values", async () => {
    const input = ["encoded both ways"]
    const floats = await gateway.embed({ model: "acme/embed", input })
    const base64 = await gateway.embed({ model: "acme/embed", input, encoding_format: "base64" })
    assert.strictEqual(cacheOf(base64), "hit")
    assert.deepStrictEqual(decodeFloat32(base64.json.data[0].embedding), floats.json.data[0].embedding)

    const input2 = ["stored as base64 first"]
    const b = await gateway.embed({ model: "acme/embed", input: input2, encoding_format: "base64" })
    const f = await gateway.embed({ model: "acme/embed", input: input2 })
    assert.strictEqual(cacheOf(f), "hit")
    assert.deepStrictEqual(f.json.data[0].embedding, decodeFloat32(b.json.data[0].embedding))
    assert.strictEqual(sent().length, 2)
  })

  it("never writes a zero-data-retention request", async () => {
    const input = ["retained nowhere"]
    const zdr = await gateway.embed({ model: "acme/embed", input, provider: { zdr: true } })
    assert.strictEqual(zdr.status, 200, zdr.text)
    const after = await gateway.embed({ model: "acme/embed", input })
    assert.strictEqual(cacheOf(after), "miss")
    assert.strictEqual(sent().length, 2)
  })

  it("bypass neither reads nor writes; refresh writes without reading", async () => {
    const input = ["header directives"]
    await gateway.embed({ model: "acme/embed", input })
    const bypass = await gateway.embed({ model: "acme/embed", input: ["never written"] }, { headers: { "x-switchyard-cache": "bypass" } })
    assert.strictEqual(cacheOf(bypass), "bypass")
    assert.strictEqual(cacheOf(await gateway.embed({ model: "acme/embed", input: ["never written"] })), "miss")
    const refresh = await gateway.embed({ model: "acme/embed", input }, { headers: { "x-switchyard-cache": "refresh" } })
    assert.strictEqual(cacheOf(refresh), "miss")
    assert.strictEqual(sent().length, 4)
    assert.strictEqual(cacheOf(await gateway.embed({ model: "acme/embed", input: ["written by refresh"] }, { headers: { "x-switchyard-cache": "refresh" } })), "miss")
    assert.strictEqual(cacheOf(await gateway.embed({ model: "acme/embed", input: ["written by refresh"] })), "hit")
  })

  it("refuses an unknown directive in the envelope", async () => {
    const reply = await gateway.embed({ model: "acme/embed", input: "x" }, { headers: { "x-switchyard-cache": "forever" } })
    assert.strictEqual(reply.status, 400)
    assert.match(reply.json.error.message, /x-switchyard-cache must be bypass or refresh/u)
    assert.strictEqual(sent().length, 0)
  })
})

describe("which endpoint a cache hit comes from", () => {
  let gateway: Gateway
  const fakes: Record<string, FakeUpstream.FakeServer> = {}
  const slugs = ["deadp", "goodp", "fp16p", "int8p"] as const

  beforeAll(async () => {
    for (const slug of slugs) fakes[slug] = await FakeOpenAi.start()
    const same = { upstream_model: "embed", pricing: { prompt: "0.1" } }
    gateway = await startGateway({
      config: {
        providers: [
          // Two providers of one upstream model and quantization, and two of another model at two quantizations.
          provider("deadp", fakes.deadp!.url, { name: "Dead Provider" }, [endpoint("acme/embed", { ...same, quantization: "fp16" })]),
          provider("goodp", fakes.goodp!.url, { name: "Good Provider" }, [endpoint("acme/embed", { ...same, quantization: "fp16" })]),
          provider("fp16p", fakes.fp16p!.url, {}, [endpoint("acme/spread", { ...same, quantization: "fp16" })]),
          provider("int8p", fakes.int8p!.url, {}, [endpoint("acme/spread", { ...same, quantization: "int8" })])
        ],
        workspaces: { default: { cache: true } }
      },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all(Object.values(fakes).map((f) => f.close()))
  })
  const calls = () => Object.fromEntries(slugs.map((slug) => [slug, fakes[slug]!.requests.length]))

  it("a hit is credited to the endpoint that embedded it: header, body, /generation and /activity, with no upstream attempt", async () => {
    fakes.deadp!.setBehaviour({ _tag: "Status", status: 503 })
    const body = { model: "acme/embed", input: ["served by the good one"], provider: { order: ["deadp", "goodp"] } }
    const first = await gateway.embed(body)
    assert.strictEqual(first.status, 200, first.text)
    assert.strictEqual(first.json.provider, "goodp")
    const before = calls()
    const hits = [await gateway.embed(body, { headers: { "x-switchyard-explain": "true" } }), await gateway.embed(body)]
    assert.deepStrictEqual(calls(), before, "no upstream is called for a hit")
    for (const hit of hits) {
      assert.strictEqual(hit.status, 200, hit.text)
      assert.strictEqual(cacheOf(hit), "hit")
      assert.strictEqual(hit.headers.get("x-switchyard-provider"), "goodp")
      assert.strictEqual(hit.json.provider, "goodp")
      assert.deepStrictEqual(vectorTexts(hit), vectorTexts(first))
    }
    assert.deepStrictEqual(hits[0]!.json.switchyard.routing.tried, [])
    const generation = await gateway.call(`/generation?id=${hits[1]!.json.id}`)
    assert.strictEqual(generation.status, 200, generation.text)
    assert.strictEqual(generation.json.data.provider_name, "Good Provider")
    const activity = await gateway.call("/activity", undefined, { key: gateway.server.managementKey })
    const rows = (activity.json.data as Array<any>).filter((r) => r.model === "acme/embed")
    assert.deepStrictEqual(rows.map((r) => [r.provider_name, r.requests]), [["Good Provider", 3]])
    fakes.deadp!.setBehaviour({ _tag: "Normal" })
  })

  it("looks up every endpoint of the plan: requests drawn across quantizations all hit what one endpoint embedded", async () => {
    const input = ["spread over two quantizations"]
    const first = await gateway.embed({ model: "acme/spread", input }, { headers: { "x-switchyard-seed": "1" } })
    assert.strictEqual(first.status, 200, first.text)
    const servedBy = first.json.provider as string
    const before = calls()
    const drawn = new Set<string>()
    for (let seed = 2; seed < 22; seed++) {
      const reply = await gateway.embed({ model: "acme/spread", input }, { headers: { "x-switchyard-seed": String(seed), "x-switchyard-explain": "1" } })
      assert.strictEqual(reply.status, 200, reply.text)
      drawn.add(reply.json.switchyard.routing.attempts[0].split("/")[0])
      assert.strictEqual(cacheOf(reply), "hit")
      assert.strictEqual(reply.json.provider, servedBy)
      assert.deepStrictEqual(vectorTexts(reply), vectorTexts(first))
    }
    assert.sameMembers([...drawn], ["fp16p", "int8p"], "both endpoints were drawn as the primary")
    assert.deepStrictEqual(calls(), before)
  })

  it("combines a partial hit only within one endpoint's entries", async () => {
    await gateway.embed({ model: "acme/spread", input: ["only at fp16"], provider: { order: ["fp16p"] } })
    await gateway.embed({ model: "acme/spread", input: ["only at int8"], provider: { order: ["int8p"] } })
    const before = fakes.fp16p!.requests.length
    const reply = await gateway.embed({ model: "acme/spread", input: ["only at fp16", "only at int8"], provider: { order: ["fp16p"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    assert.strictEqual(reply.json.provider, "fp16p")
    assert.strictEqual(cacheOf(reply), "partial")
    assert.strictEqual(reply.headers.get("x-switchyard-cached-items"), "1")
    assert.deepStrictEqual(fakes.fp16p!.requests.slice(before).map((r) => (r.body as { input: unknown }).input), [["only at int8"]])
  })
})

describe("embeddings cache off", () => {
  it("answers bypass for a workspace that has not turned it on, and calls the upstream every time", async () => {
    const alpha = await FakeOpenAi.start()
    const gateway = await startGateway({
      config: { providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])] },
      credits: 1
    })
    try {
      const body = { model: "acme/embed", input: "not cached" }
      const replies = [await gateway.embed(body), await gateway.embed(body)]
      assert.deepStrictEqual(replies.map(cacheOf), ["bypass", "bypass"])
      assert.strictEqual(alpha.requests.length, 2)
      const manage = { key: gateway.server.managementKey }
      assert.isFalse((await gateway.call("/workspaces/default", undefined, manage)).json.data.cache)

      // A management key turns it on for the workspace: the next request is written, the one after served.
      const on = await gateway.call("/workspaces/default", { cache: true }, { ...manage, method: "PATCH" })
      assert.strictEqual(on.status, 200, on.text)
      assert.isTrue(on.json.data.cache)
      assert.isTrue((await gateway.call("/workspaces/default", undefined, manage)).json.data.cache)
      const after = [await gateway.embed(body), await gateway.embed(body)]
      assert.deepStrictEqual(after.map(cacheOf), ["miss", "hit"])
      assert.strictEqual(alpha.requests.length, 3)
    } finally {
      await gateway.close()
      await alpha.close()
    }
  })
})

describe("the workspace API's cache switch", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  const manage = () => ({ key: gateway.server.managementKey })
  const patch = (ref: string, body: unknown) => gateway.call(`/workspaces/${ref}`, body, { ...manage(), method: "PATCH" })

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])],
        workspaces: { default: { cache: true } }
      },
      credits: 1
    })
  })
  afterAll(async () => {
    await gateway?.close()
    await alpha?.close()
  })

  it("turned off, the next identical request goes upstream; turned on again, it is served from the cache; null returns to the config", async () => {
    const body = { model: "acme/embed", input: "switched" }
    assert.isTrue((await gateway.call("/workspaces/default", undefined, manage())).json.data.cache, "the config file turns it on")
    assert.deepStrictEqual([cacheOf(await gateway.embed(body)), cacheOf(await gateway.embed(body))], ["miss", "hit"])
    assert.strictEqual(alpha.requests.length, 1)

    const off = await patch("default", { cache: false })
    assert.strictEqual(off.status, 200, off.text)
    assert.isFalse(off.json.data.cache)
    const listed = await gateway.call("/workspaces", undefined, manage())
    assert.isFalse(listed.json.data.find((w: any) => w.slug === "default").cache)
    const bypassed = await gateway.embed(body)
    assert.strictEqual(cacheOf(bypassed), "bypass")
    assert.isAbove(bypassed.json.usage.cost, 0)
    assert.strictEqual(alpha.requests.length, 2)

    const on = await patch("default", { cache: true })
    assert.isTrue(on.json.data.cache)
    assert.strictEqual(cacheOf(await gateway.embed(body)), "hit")
    assert.strictEqual(alpha.requests.length, 2)

    // Off again, then `null`: the config file's setting (on) applies again.
    await patch("default", { cache: false })
    assert.strictEqual(cacheOf(await gateway.embed(body)), "bypass")
    const reset = await patch("default", { cache: null })
    assert.isTrue(reset.json.data.cache)
    assert.strictEqual(cacheOf(await gateway.embed(body)), "hit")
    assert.strictEqual(alpha.requests.length, 3)
  })

  it("a workspace is created with the switch set or left to the config, and a bad value is refused in the envelope", async () => {
    const created = await gateway.call("/workspaces", { name: "Cached", slug: "cached", cache: true }, manage())
    assert.strictEqual(created.status, 201, created.text)
    assert.isTrue(created.json.data.cache)
    assert.isTrue((await gateway.call("/workspaces/cached", undefined, manage())).json.data.cache)
    const plain = await gateway.call("/workspaces", { name: "Plain", slug: "plain" }, manage())
    assert.isFalse(plain.json.data.cache, "no setting and none in the config file: off")
    const bad = await patch("plain", { cache: "yes" })
    assert.strictEqual(bad.status, 400, bad.text)
    assert.isString(bad.json.error.message)
    assert.isFalse((await gateway.call("/workspaces/plain", undefined, manage())).json.data.cache)
  })
})
