import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

// Each replica keeps key facts in memory; a change made through one reaches the others through
// PostgreSQL's LISTEN/NOTIFY, and in any case within the one second an entry is kept.
const bound = 1000

describe.skipIf(storeKind !== "postgres")("two replicas on one PostgreSQL: a key changed on one", () => {
  let url: string
  let a: ServerProcess
  let b: ServerProcess
  let upstream: FakeUpstream.FakeServer
  const managementKey = KeySecret.generate()
  const apiKey = KeySecret.generate()

  beforeAll(async () => {
    url = await freshDatabase()
    const env: Record<string, string> = {
      DATABASE_URL: url,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_RATE_LIMIT: "off"
    }
    upstream = await FakeOpenAi.start()
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" } })])]
    }))
    Object.assign(env, { SWITCHYARD_CONFIG: configPath, ALPHA_API_KEY: "sk-fake" })
    a = await startServerProcess({ ...env, SWITCHYARD_DATA_DIR: tempDir("replica-a") })
    b = await startServerProcess({ ...env, SWITCHYARD_DATA_DIR: tempDir("replica-b") })
  }, 120_000)
  afterAll(async () => {
    await a?.stop()
    await b?.stop()
    await upstream?.close()
    await dropDatabase(url)
  })

  const call = (server: ServerProcess, method: string, path: string, key: string, body?: unknown) =>
    fetch(`${server.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })

  const embed = (server: ServerProcess, key: string) =>
    call(server, "POST", "/embeddings", key, { model: "switchyard/local-embed", input: "still here?", dimensions: 8 })

  /** Milliseconds until `server` refuses `key` with 401, asking every 10 ms (at most 10 s). */
  const refusedAfter = async (server: ServerProcess, key: string, since: number) => {
    for (;;) {
      const reply = await call(server, "GET", "/key", key)
      if (reply.status === 401) return Date.now() - since
      assert.strictEqual(reply.status, 200)
      if (Date.now() - since > 10_000) throw new Error("the key was never refused")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  const newKey = async () => {
    const created = await call(a, "POST", "/keys", managementKey, { name: "replicated" })
    assert.strictEqual(created.status, 201)
    const body: any = await created.json()
    const key = body.key as string
    // Both replicas have served it (and keep its facts) before the change.
    for (const server of [a, b]) {
      assert.strictEqual((await call(server, "GET", "/key", key)).status, 200)
      assert.strictEqual((await embed(server, key)).status, 200)
    }
    return { key, hash: body.data.hash as string }
  }

  it(`disabled on one, is refused by the other within ${bound} ms`, async () => {
    const { hash, key } = await newKey()
    const changedAt = Date.now()
    assert.strictEqual((await call(a, "PATCH", `/keys/${hash}`, managementKey, { disabled: true })).status, 200)
    const elapsed = await refusedAfter(b, key, changedAt)
    assert.isAtMost(elapsed, bound, `refused ${elapsed} ms after the change`)
    assert.strictEqual((await embed(b, key)).status, 401)
  })

  it(`deleted on one, is refused by the other within ${bound} ms`, async () => {
    const { hash, key } = await newKey()
    const changedAt = Date.now()
    assert.strictEqual((await call(a, "DELETE", `/keys/${hash}`, managementKey)).status, 200)
    const elapsed = await refusedAfter(b, key, changedAt)
    assert.isAtMost(elapsed, bound, `refused ${elapsed} ms after the change`)
    assert.strictEqual((await embed(b, key)).status, 401)
  })

  it(`a limit lowered on one is enforced by the other within ${bound} ms, whatever slice it leased before`, async () => {
    const created = await call(a, "POST", "/keys", managementKey, { name: "limited", limit: 1 })
    assert.strictEqual(created.status, 201)
    const body: any = await created.json()
    const key = body.key as string
    const priced = (server: ServerProcess) => call(server, "POST", "/embeddings", key, { model: "acme/embed", input: "priced" })
    // Both replicas admit from a lease on the key: each holds a slice of its limit.
    for (const server of [a, b]) assert.strictEqual((await priced(server)).status, 200)
    const changedAt = Date.now()
    assert.strictEqual((await call(a, "PATCH", `/keys/${body.data.hash}`, managementKey, { limit: 0.000000001 })).status, 200)
    for (;;) {
      const reply = await priced(b)
      if (reply.status === 402) break
      assert.strictEqual(reply.status, 200)
      assert.isAtMost(Date.now() - changedAt, bound, "the lowered limit reached the other replica in time")
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
    assert.isAtMost(Date.now() - changedAt, bound)
  })
})
