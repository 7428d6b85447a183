import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

// The bound: a change made through one replica routes on every replica within a second.
const bound = 1000
const secret = "sk-replicated-provider-credential-91c2"

describe.skipIf(storeKind !== "postgres")("two replicas on one PostgreSQL: a provider managed through one", () => {
  let url: string
  let a: ServerProcess
  let b: ServerProcess
  let upstream: FakeUpstream.FakeServer
  const managementKey = KeySecret.generate()
  const apiKey = KeySecret.generate()

  beforeAll(async () => {
    url = await freshDatabase()
    upstream = await FakeOpenAi.start({ apiKey: secret })
    const env: Record<string, string> = {
      DATABASE_URL: url,
      SWITCHYARD_SECRET_KEY: process.env.SWITCHYARD_SECRET_KEY ?? "",
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_RATE_LIMIT: "off",
      SWITCHYARD_LOG_LEVEL: "debug"
    }
    a = await startServerProcess({ ...env, SWITCHYARD_DATA_DIR: tempDir("replica-a") })
    b = await startServerProcess({ ...env, SWITCHYARD_DATA_DIR: tempDir("replica-b") })
  }, 120_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await upstream?.close()
    await dropDatabase(url)
  })

  const call = async (server: ServerProcess, method: string, path: string, key: string, body?: unknown) => {
    const response = await fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    return { status: response.status, headers: response.headers, text: await response.text() }
  }
  const embed = (server: ServerProcess) => call(server, "POST", "/embeddings", apiKey, { model: "replicated/embed", input: "which replica?" })

  /** Milliseconds from `since` until `server` answers the model's request with `status`, asking every 20 ms. */
  const until = async (server: ServerProcess, status: number, since: number) => {
    for (;;) {
      const reply = await embed(server)
      if (reply.status === status) {
        if (status === 200) assert.strictEqual(reply.headers.get("x-switchyard-provider"), "replicated")
        return performance.now() - since
      }
      if (performance.now() - since > 10_000) throw new Error(`still ${reply.status} after 10 s: ${reply.text}`)
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
  }

  it("routes on both within a second of its creation, stops on both within a second of its disabling, no restart", async () => {
    assert.strictEqual((await embed(a)).status, 404)
    assert.strictEqual((await embed(b)).status, 404)
    const body = {
      ...provider("replicated", upstream.url, {}, [endpoint("replicated/embed", { upstream_model: "replicated-embed" })]),
      api_key_env: undefined,
      api_key: secret
    }
    const created = await call(a, "POST", "/providers", managementKey, body)
    assert.strictEqual(created.status, 201, created.text)
    const createdAt = performance.now()
    const [onA, onB] = await Promise.all([until(a, 200, createdAt), until(b, 200, createdAt)])
    assert.isBelow(onA, bound)
    assert.isBelow(onB, bound)

    const disabled = await call(b, "PATCH", "/providers/replicated", managementKey, { enabled: false })
    assert.strictEqual(disabled.status, 200, disabled.text)
    const disabledAt = performance.now()
    const [offA, offB] = await Promise.all([until(a, 404, disabledAt), until(b, 404, disabledAt)])
    assert.isBelow(offA, bound)
    assert.isBelow(offB, bound)
    if (process.env.SWITCHYARD_TEST_REPORT === "1") console.log(JSON.stringify({ onA, onB, offA, offB }))

    const answers = [created.text, disabled.text, (await call(a, "GET", "/providers/replicated", managementKey)).text,
      (await call(b, "GET", "/providers", managementKey)).text, (await call(a, "GET", "/audit-log", managementKey)).text]
    for (const text of [...answers, a.output(), b.output()]) assert.notInclude(text, secret)
    // The upstream did receive it: it is the credential requests went with.
    assert.isTrue(upstream.requests.length > 0)
  }, 60_000)
})
