import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { endpoint, type Gateway, provider, servedBy, startGateway, waitFor } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

const secret = "sk-managed-provider-secret-7f3a"

describe(`providers managed at runtime (${storeKind})`, () => {
  let declared: FakeUpstream.FakeServer
  let managed: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    declared = await FakeOpenAi.start()
    managed = await FakeOpenAi.start({ apiKey: secret })
    gateway = await startGateway({
      config: { providers: [provider("alpha", declared.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])] }
    })
  })
  afterAll(async () => {
    await gateway.close()
    await declared.close()
    await managed.close()
  })

  const admin = () => gateway.server.managementKey
  const as = (key: string, method: string, path: string, body?: unknown) => gateway.call(path, body, { key, method })
  const body = (slug: string, facts: Record<string, unknown> = {}) => ({
    ...provider(slug, managed.url, {}, [endpoint("fresh/embed", { upstream_model: "fresh-embed" })]),
    api_key_env: undefined,
    api_key: secret,
    ...facts
  })

  it("creates a provider that routes at once, with its credential written only; disables and deletes it", async () => {
    assert.strictEqual((await gateway.embed({ model: "fresh/embed", input: "before" })).status, 404)
    const created = await as(admin(), "POST", "/providers", body("fresh"))
    assert.strictEqual(created.status, 201, created.text)
    assert.strictEqual(created.json.data.source, "api")
    assert.strictEqual(created.json.data.enabled, true)
    assert.deepStrictEqual(created.json.data.api_key, { set: true, last4: secret.slice(-4) })
    const served = await gateway.embed({ model: "fresh/embed", input: "hello" })
    assert.strictEqual(served.status, 200, served.text)
    assert.strictEqual(servedBy(served), "fresh")
    assert.strictEqual(FakeUpstream.bearer(managed.requests.at(-1)!), secret)
    const got = await as(admin(), "GET", "/providers/fresh")
    assert.strictEqual(got.json.data.active, true)
    const listed = await as(gateway.server.apiKey, "GET", "/providers")
    assert.isTrue(listed.json.data.some((p: any) => p.slug === "fresh" && p.active && p.source === undefined))
    const adminView = (await as(admin(), "GET", "/providers")).json.data as Array<any>
    assert.deepInclude(adminView.find((p) => p.slug === "fresh"), { source: "api", enabled: true, api_key: { set: true, last4: secret.slice(-4) } })
    assert.deepInclude(adminView.find((p) => p.slug === "alpha"), { source: "config", enabled: true, api_key: { set: true, last4: null } })

    const disabled = await as(admin(), "PATCH", "/providers/fresh", { enabled: false })
    assert.strictEqual(disabled.status, 200, disabled.text)
    assert.strictEqual(disabled.json.data.enabled, false)
    const off = await gateway.embed({ model: "fresh/embed", input: "off" })
    assert.strictEqual(off.status, 404)
    // It says why: the model exists, its only provider is disabled.
    assert.strictEqual(off.json.error.message, 'Model "fresh/embed" has no enabled provider: fresh is disabled', off.text)
    assert.deepStrictEqual(off.json.error.metadata.disabled, ["fresh"])
    assert.isFalse(
      ((await as(gateway.server.apiKey, "GET", "/providers")).json.data as Array<any>).some((p) => p.slug === "fresh"),
      "a provider disabled through the API is listed to administrators only"
    )
    assert.deepInclude((await as(admin(), "GET", "/providers")).json.data.find((p: any) => p.slug === "fresh"), { enabled: false, active: false })
    assert.strictEqual((await as(admin(), "PATCH", "/providers/fresh", { enabled: true })).status, 200)
    assert.strictEqual((await gateway.embed({ model: "fresh/embed", input: "on" })).status, 200)

    const rotated = await as(admin(), "PATCH", "/providers/fresh", { api_key: "sk-rotated-credential-0042" })
    assert.deepStrictEqual(rotated.json.data.api_key, { set: true, last4: "0042" })
    // The upstream knows only the first credential: the rotated one reaches it, and is refused.
    assert.strictEqual((await gateway.embed({ model: "fresh/embed", input: "rotated" })).status, 502)
    assert.strictEqual(FakeUpstream.bearer(managed.requests.at(-1)!), "sk-rotated-credential-0042")
    // The provider test says which provider refused, not "upstream".
    const refusedTest = (await as(admin(), "POST", "/providers/fresh/test")).json.data.endpoints[0]
    assert.strictEqual(refusedTest.ok, false)
    assert.include(refusedTest.error, 'Provider "fresh" ')
    assert.notInclude(refusedTest.error, "upstream")
    assert.strictEqual((await as(admin(), "PATCH", "/providers/fresh", { api_key: secret })).status, 200)

    const testStarted = performance.now()
    const tested = await as(admin(), "POST", "/providers/fresh/test")
    const testMs = performance.now() - testStarted
    assert.strictEqual(tested.status, 200, tested.text)
    assert.strictEqual(tested.json.data.ok, true)
    assert.strictEqual(tested.json.data.endpoints[0].status, 200)
    // The gateway's timing of its call to the endpoint: a whole number of milliseconds within the test's round trip.
    assert.isTrue(Number.isInteger(tested.json.data.endpoints[0].latency_ms))
    assert.isAtMost(tested.json.data.endpoints[0].latency_ms, testMs)
    assert.isAtLeast(tested.json.data.endpoints[0].latency_ms, 0)

    const audit = await as(admin(), "GET", "/audit-log?action=provider.*")
    assert.deepStrictEqual(audit.json.data.map((e: any) => e.action).reverse(), [
      "provider.create", "provider.disable", "provider.enable", "provider.update", "provider.update"
    ])
    assert.deepStrictEqual(audit.json.data[1].after, { api_key: { set: true, last4: "0042" } })

    assert.strictEqual((await as(admin(), "DELETE", "/providers/fresh")).status, 200)
    assert.strictEqual((await as(admin(), "GET", "/providers/fresh")).status, 404)
    assert.strictEqual((await gateway.embed({ model: "fresh/embed", input: "gone" })).status, 404)
    const everything = JSON.stringify([created.json, got.json, listed.json, disabled.json, rotated.json, tested.json,
      (await as(admin(), "GET", "/audit-log?limit=500")).json])
    assert.notInclude(everything, secret)
    assert.notInclude(everything, "sk-rotated-credential-0042")
  })

  it("refuses what the config file's schema refuses, with the field, and a taken slug", async () => {
    const bad = await as(admin(), "POST", "/providers", { ...body("broken"), adapter: "nope" })
    assert.strictEqual(bad.status, 400)
    assert.include(bad.text, "adapter")
    const extra = await as(admin(), "POST", "/providers", { ...body("broken"), surprise: 1 })
    assert.strictEqual(extra.status, 400)
    assert.strictEqual((await as(admin(), "POST", "/providers", { ...body("broken"), api_key: 42 })).status, 400)
    assert.strictEqual((await as(admin(), "POST", "/providers", body("twice"))).status, 201)
    assert.strictEqual((await as(admin(), "POST", "/providers", body("twice"))).status, 409)
    assert.strictEqual((await as(admin(), "PATCH", "/providers/twice", { base_url: "not a url" })).status, 400)
    assert.strictEqual((await as(admin(), "PATCH", "/providers/twice", { slug: "renamed" })).status, 400)
    assert.strictEqual((await as(admin(), "PATCH", "/providers/missing", { name: "x" })).status, 404)
    assert.strictEqual((await as(admin(), "DELETE", "/providers/twice")).status, 200)
  })

  it("config-file providers answer 409 to changes; keys that are not instance administrators get 403", async () => {
    assert.strictEqual((await as(admin(), "POST", "/providers", body("alpha"))).status, 409)
    assert.strictEqual((await as(admin(), "PATCH", "/providers/alpha", { name: "x" })).status, 409)
    assert.strictEqual((await as(admin(), "DELETE", "/providers/alpha")).status, 409)
    const alpha = await as(admin(), "GET", "/providers/alpha")
    assert.strictEqual(alpha.json.data.source, "config")
    assert.strictEqual((await as(admin(), "POST", "/providers/alpha/test")).json.data.ok, true)

    const team = (await as(admin(), "POST", "/workspaces", { name: "Team", slug: "providers-team" })).json.data.id as string
    const teamKey = (await as(admin(), "POST", "/keys", { name: "team admin", workspace_id: team, kind: "management" })).json.key as string
    for (const [method, path, payload] of [
      ["POST", "/providers", body("mine")],
      ["GET", "/providers/alpha", undefined],
      ["PATCH", "/providers/alpha", { name: "x" }],
      ["DELETE", "/providers/alpha", undefined],
      ["POST", "/providers/alpha/test", undefined]
    ] as const) {
      assert.strictEqual((await as(teamKey, method, path, payload)).status, 403, `${method} ${path}`)
      assert.strictEqual((await as(gateway.server.apiKey, method, path, payload)).status, 403, `${method} ${path} (standard key)`)
    }
  })

  it("a request in flight when its provider is disabled finishes on the plan it started with", async () => {
    assert.strictEqual((await as(admin(), "POST", "/providers", body("held"))).status, 201)
    let release = () => {}
    const until = new Promise<void>((resolve) => (release = resolve))
    managed.setBehaviour({ _tag: "Held", until })
    const seen = managed.requests.length
    const inFlight = gateway.embed({ model: "fresh/embed", input: "in flight" })
    await waitFor(() => managed.requests.length > seen)
    assert.strictEqual((await as(admin(), "PATCH", "/providers/held", { enabled: false })).status, 200)
    assert.strictEqual((await gateway.embed({ model: "fresh/embed", input: "after" })).status, 404)
    release()
    const finished = await inFlight
    managed.setBehaviour(FakeUpstream.normal)
    assert.strictEqual(finished.status, 200, finished.text)
    assert.strictEqual(servedBy(finished), "held")
    assert.strictEqual((await as(admin(), "DELETE", "/providers/held")).status, 200)
  })
})
