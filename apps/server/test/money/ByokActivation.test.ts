import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Crypto from "node:crypto"
import { endpoint, type Gateway, provider, servedBy, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"
import { storeKind } from "../support/TestServer.ts"

describe(`a BYOK credential that turns a provider on says so (${storeKind})`, () => {
  let alpha: FakeUpstream.FakeServer
  let delta: FakeUpstream.FakeServer
  let gateway: Gateway

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    delta = await FakeOpenAi.start({ apiKey: "sk-workspace-own" })
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.5" } })]),
          // The gateway holds no credential for delta: only a workspace's own can turn it on.
          provider("delta", delta.url, { api_key_env: "DELTA_KEY_NOT_SET" }, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.01" } })])
        ]
      },
      env: { SWITCHYARD_SECRET_KEY: Crypto.randomBytes(32).toString("hex"), SWITCHYARD_LOG_LEVEL: "info" },
      credits: 10
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([alpha.close(), delta.close()])
  })

  const store = (body: unknown) => gateway.call("/byok", body, { key: gateway.server.managementKey })

  it("answers activates_provider and logs a line when the credential turns a provider on; not for one the gateway already uses", async () => {
    const before = await gateway.embed({ model: "acme/embed", input: "who serves" })
    assert.strictEqual(servedBy(before), "alpha")
    const { lines, result: stored } = await capturingStdout(() => store({ provider: "delta", key: "sk-workspace-own" }))
    assert.strictEqual(stored.status, 201, stored.text)
    assert.strictEqual(stored.json.data.activates_provider, true)
    const line = lines.find((l) => String(l.message).includes("activates a provider"))
    assert.isDefined(line, JSON.stringify(lines))
    assert.strictEqual(line.provider, "delta")
    assert.notInclude(JSON.stringify(lines), "sk-workspace-own")
    const after = await gateway.embed({ model: "acme/embed", input: "who serves now" })
    assert.strictEqual(servedBy(after), "delta")

    const own = await store({ provider: "alpha", key: "sk-fake" })
    assert.strictEqual(own.status, 201, own.text)
    assert.strictEqual(own.json.data.activates_provider, false)
    const listed = await gateway.call("/byok", undefined, { key: gateway.server.managementKey })
    assert.isUndefined(listed.json.data[0].activates_provider, "only a create or an update answers it")
  })
})
