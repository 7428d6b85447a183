import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as FakeTei from "../fakes/FakeTei.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, type Gateway, startGateway } from "./Gateway.ts"

const model = "sh/bge-small"

describe("A self-hosted provider of three replicas (base_urls)", () => {
  let gateway: Gateway
  let replicas: Array<FakeUpstream.FakeServer>

  const embedsAt = (server: FakeUpstream.FakeServer) => server.requests.filter((r) => r.path === "/embed").length
  const shown = async () => {
    const reply = await gateway.call("/providers/gpu-tei", undefined, { key: gateway.server.managementKey, method: "GET" })
    assert.strictEqual(reply.status, 200, reply.text)
    return reply.json.data.replicas as Array<{ base_url: string; healthy: boolean; in_flight: number; p50_ms: number | null }>
  }

  beforeAll(async () => {
    replicas = await Promise.all([FakeTei.start(), FakeTei.start(), FakeTei.start()])
    gateway = await startGateway({
      config: {
        providers: [{
          slug: "gpu-tei",
          name: "GPU TEI",
          adapter: "tei",
          base_urls: replicas.map((r) => r.url),
          api_key_env: null,
          data_collection: "deny",
          timeout_ms: 2_500,
          endpoints: [endpoint(model, { upstream_model: "bge-small", dimensions: 384 })]
        }],
        workspaces: { default: { cache: false } }
      },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all(replicas.map((r) => r.close()))
  })

  it("spreads concurrent requests over every replica and shows each one's load and latency", async () => {
    const replies = await Promise.all(Array.from({ length: 24 }, (_, i) => gateway.embed({ model, input: `text ${i}` })))
    for (const reply of replies) assert.strictEqual(reply.status, 200, reply.text)
    for (const replica of replicas) assert.isAbove(embedsAt(replica), 0, replica.url)
    const listed = await shown()
    assert.deepStrictEqual(listed.map((r) => r.base_url), replicas.map((r) => r.url))
    for (const r of listed) {
      assert.isTrue(r.healthy)
      assert.strictEqual(r.in_flight, 0)
      assert.isNotNull(r.p50_ms)
    }
  })

  it("a replica that fails is held out after its first failure: no request fails, none reaches it again", async () => {
    const [down] = replicas
    down!.setBehaviour({ _tag: "Status", status: 503, body: JSON.stringify({ error: "Backend unavailable", error_type: "Backend" }) })
    const before = embedsAt(down!)
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => gateway.embed({ model, input: `more ${i}` })))
    for (const reply of replies) assert.strictEqual(reply.status, 200, reply.text)
    const tried = embedsAt(down!) - before
    assert.isAtMost(tried, 1 + 15, "only requests already on their way met it")
    const afterHeld = embedsAt(down!)
    for (let i = 0; i < 6; i++) assert.strictEqual((await gateway.embed({ model, input: `later ${i}` })).status, 200)
    assert.strictEqual(embedsAt(down!), afterHeld, "held out: no request reaches it")
    const listed = await shown()
    assert.isFalse(listed[0]!.healthy)
    assert.isTrue(listed[1]!.healthy && listed[2]!.healthy)
    down!.setBehaviour(FakeUpstream.normal)
  })

  it("a replica that hangs is given up at the attempt's time limit and the next one answers", async () => {
    const [, hung] = replicas
    hung!.setBehaviour({ _tag: "Hang" })
    // The held-out first replica is last in the order; the hung one is tried while it is healthy.
    const replies = await Promise.all(Array.from({ length: 4 }, (_, i) => gateway.embed({ model, input: `hang ${i}` })))
    for (const reply of replies) assert.strictEqual(reply.status, 200, reply.text)
    const listed = await shown()
    assert.isFalse(listed[1]!.healthy)
    hung!.setBehaviour(FakeUpstream.normal)
  })
})
