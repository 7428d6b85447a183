import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

describe(`the workspace's recent failed model calls (${storeKind})`, () => {
  let alpha: FakeUpstream.FakeServer
  let beta: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    beta = await FakeOpenAi.start()
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })]),
          provider("beta", beta.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])
        ]
      }
    })
  }, 120_000)
  afterAll(async () => {
    await gateway?.close()
    await alpha?.close()
    await beta?.close()
  })

  const failures = (key = gateway.server.managementKey) => gateway.call("/activity/failures", undefined, { key })

  it("lists each failed call newest first, with its status, reason, the provider tried last and every attempt; served calls are not listed", async () => {
    alpha.setBehaviour({ _tag: "Status", status: 503 })
    beta.setBehaviour({ _tag: "Status", status: 500 })
    const failed = await gateway.embed({ model: "acme/embed", input: "hello", provider: { order: ["alpha", "beta"] } })
    assert.strictEqual(failed.status, 502, failed.text)
    beta.setBehaviour({ _tag: "Normal" })
    const served = await gateway.embed({ model: "acme/embed", input: "hello", provider: { order: ["alpha", "beta"] } })
    assert.strictEqual(served.status, 200, served.text)
    const unknown = await gateway.embed({ model: "acme/nothing", input: "hello" })
    assert.strictEqual(unknown.status, 404, unknown.text)

    const listed = await failures()
    assert.strictEqual(listed.status, 200, listed.text)
    const [newest, older, ...rest] = listed.json.data
    assert.deepStrictEqual(rest, [])
    assert.deepStrictEqual([newest.status, newest.model, newest.task], [404, "acme/nothing", "embeddings"])
    assert.strictEqual(newest.message, unknown.json.error.message)
    assert.deepStrictEqual([older.status, older.provider, older.model], [502, "beta", "acme/embed"])
    assert.strictEqual(older.message, failed.json.error.message)
    assert.deepStrictEqual(older.attempts.map((a: { provider: string; outcome: string }) => [a.provider, a.outcome]), [
      ["alpha", "failure"],
      ["beta", "failure"]
    ])
    assert.isAtLeast(Date.parse(newest.at), Date.parse(older.at))
    assert.isAbove(newest.id, older.id)
    alpha.setBehaviour({ _tag: "Normal" })
  })

  it("is for a management key only", async () => {
    const refused = await failures(gateway.server.apiKey)
    assert.strictEqual(refused.status, 403, refused.text)
  })
})
