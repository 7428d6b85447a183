import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, type Gateway, provider, startGateway } from "./Gateway.ts"

// A port nothing listens on: a connection to it is refused.
const closedPort = () =>
  new Promise<number>((resolve) => {
    const server = Http.createServer()
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      server.close(() => resolve(port))
    })
  })

describe("GET /generation from the recorded upstream calls", () => {
  let gateway: Gateway
  let beta: FakeUpstream.FakeServer

  beforeAll(async () => {
    beta = await FakeOpenAi.start({ responseId: "embd-fake-7f3a" })
    const refused = `http://127.0.0.1:${await closedPort()}/v1`
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", refused, {}, [endpoint("acme/embed", { upstream_model: "embed" })]),
          provider("beta", beta.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])
        ],
        workspaces: { default: { cache: true } }
      },
      credits: 100
    })
  })
  afterAll(async () => {
    await gateway.close()
    await beta.close()
  })

  const generationOf = async (id: string) => {
    const reply = await gateway.call(`/generation?id=${id}`)
    assert.strictEqual(reply.status, 200, reply.text)
    return reply.json.data
  }

  it("a fallback after a refused connection lists both calls, the first with its failure", async () => {
    const reply = await gateway.embed({ model: "acme/embed", input: "refused then served", provider: { order: ["alpha", "beta"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    const data = await generationOf(reply.json.id)
    const responses = data.provider_responses as Array<any>
    assert.strictEqual(responses.length, 2)
    assert.strictEqual(responses[0].provider_name, "alpha")
    assert.match(responses[0].endpoint_id, /^alpha\//u)
    assert.strictEqual(responses[0].status, null)
    assert.strictEqual(responses[0].reason, "Unreachable")
    assert.isUndefined(responses[0].id)
    assert.strictEqual(responses[1].provider_name, "beta")
    assert.strictEqual(responses[1].status, 200)
    assert.isUndefined(responses[1].reason)
    assert.strictEqual(data.provider, "beta")
    assert.strictEqual(data.served_from_cache, false)
    assert.strictEqual(data.generation_time, responses[1].latency)
  })

  it("upstream_id is the id the provider gave its answer", async () => {
    const reply = await gateway.embed({ model: "acme/embed", input: "whose id is it", provider: { only: ["beta"] } })
    assert.strictEqual(reply.status, 200, reply.text)
    const data = await generationOf(reply.json.id)
    assert.strictEqual(data.upstream_id, "embd-fake-7f3a")
    assert.deepStrictEqual((data.provider_responses as Array<any>).map((r) => [r.status, r.id]), [[200, "embd-fake-7f3a"]])
  })

  it("a cache hit says it was served from the cache and lists no upstream call", async () => {
    const body = { model: "acme/embed", input: "asked twice", provider: { only: ["beta"] } }
    const first = await gateway.embed(body)
    const hit = await gateway.embed(body)
    assert.strictEqual(hit.status, 200, hit.text)
    assert.strictEqual(hit.headers.get("x-switchyard-cache"), "hit")
    const data = await generationOf(hit.json.id)
    assert.strictEqual(data.served_from_cache, true)
    assert.strictEqual(data.cached, true)
    assert.deepStrictEqual(data.provider_responses, [])
    assert.strictEqual(data.upstream_id, null)
    assert.strictEqual(data.generation_time, null)
    assert.strictEqual((await generationOf(first.json.id)).served_from_cache, false)
  })
})
