import { assert, describe, it } from "@effect/vitest"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import { freePort } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"
import { type BundleProcess, healthy, launch } from "../support/BundleProcess.ts"

const managementKey = `sk-sy-v1-${"3".repeat(64)}`
const apiKey = `sk-sy-v1-${"4".repeat(64)}`

describe.skipIf(storeKind !== "postgres")("replicas on one PostgreSQL and the credential key", () => {
  it("a replica without SWITCHYARD_SECRET_KEY stops at start with one line saying why", async () => {
    const databaseUrl = await freshDatabase()
    try {
      const gateway = launch({
        SWITCHYARD_HOST: "127.0.0.1",
        SWITCHYARD_PORT: String(await freePort()),
        SWITCHYARD_DATA_DIR: tempDir("replica"),
        DATABASE_URL: databaseUrl,
        SWITCHYARD_SECRET_KEY: ""
      })
      const exit = await gateway.exited
      assert.strictEqual(exit.code, 1)
      const lines = gateway.stderr().split("\n").filter((l) => l.trim() !== "")
      assert.strictEqual(lines.length, 1, gateway.stderr())
      assert.include(lines[0], "SWITCHYARD_SECRET_KEY is required with DATABASE_URL")
    } finally {
      await dropDatabase(databaseUrl)
    }
  }, 120_000)

  it("a replica whose key cannot open a stored credential answers 503 in the envelope on the requests that need it, logs why, and serves the rest", async () => {
    // The upstream takes only the workspace's own credential, not the gateway's.
    const fake = await FakeOpenAi.start({ apiKey: "sk-workspace-own-credential" })
    const databaseUrl = await freshDatabase()
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", fake.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" } })])]
    }))
    const replicas: Array<{ gateway: BundleProcess; origin: string }> = []
    const start = async (secretKey: string) => {
      const port = await freePort()
      const gateway = launch({
        SWITCHYARD_HOST: "127.0.0.1",
        SWITCHYARD_PORT: String(port),
        SWITCHYARD_DATA_DIR: tempDir("replica"),
        DATABASE_URL: databaseUrl,
        SWITCHYARD_SECRET_KEY: secretKey,
        SWITCHYARD_CONFIG: configPath,
        ALPHA_API_KEY: "sk-gateway-credential",
        SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
        SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
        SWITCHYARD_RATE_LIMIT: "off"
      })
      const replica = { gateway, origin: `http://127.0.0.1:${port}` }
      replicas.push(replica)
      await healthy(gateway, replica.origin)
      return replica
    }
    const call = (origin: string, method: string, path: string, key: string, body?: unknown) =>
      fetch(`${origin}/api/v1${path}`, {
        method,
        headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) })
      }).then(async (r) => ({ status: r.status, json: await r.json() as any }))
    try {
      // Misconfigured on purpose: each replica got its own key.
      const a = await start(Crypto.randomBytes(32).toString("base64"))
      const b = await start(Crypto.randomBytes(32).toString("base64"))
      assert.strictEqual((await call(a.origin, "POST", "/credits", managementKey, { amount: 10 })).status, 200)
      const stored = await call(a.origin, "POST", "/byok", managementKey, { provider: "alpha", key: "sk-workspace-own-credential" })
      assert.strictEqual(stored.status, 201, JSON.stringify(stored.json))

      const onA = await call(a.origin, "POST", "/embeddings", apiKey, { model: "acme/embed", input: "hello" })
      assert.strictEqual(onA.status, 200, JSON.stringify(onA.json))

      const onB = await call(b.origin, "POST", "/embeddings", apiKey, { model: "acme/embed", input: "hello" })
      assert.strictEqual(onB.status, 503, JSON.stringify(onB.json))
      assert.strictEqual(onB.json.error.code, 503)
      assert.include(onB.json.error.message, "cannot be decrypted")
      assert.include(onB.json.error.message, "SWITCHYARD_SECRET_KEY")
      assert.strictEqual(onB.json.error.metadata.reason, "credential_unreadable")
      assert.include(b.gateway.stdout() + b.gateway.stderr(), "cannot be decrypted with this process's secret key")
      assert.notInclude(b.gateway.stdout() + b.gateway.stderr(), "sk-workspace-own-credential")

      // Everything that does not need the credential is served as usual.
      for (const [method, path, key] of [["GET", "/keys", managementKey], ["GET", "/byok", managementKey], ["GET", "/credits", managementKey], ["GET", "/key", apiKey]] as const) {
        assert.strictEqual((await call(b.origin, method, path, key)).status, 200, path)
      }
      const local = await call(b.origin, "POST", "/embeddings", apiKey, { model: "switchyard/local-embed", input: "hello" })
      assert.strictEqual(local.status, 200, JSON.stringify(local.json))
      // Nothing was sent upstream with the gateway's own credential in place of the workspace's.
      assert.isTrue(fake.requests.every((r) => r.headers.authorization === "Bearer sk-workspace-own-credential"))
    } finally {
      for (const replica of replicas) await replica.gateway.stop()
      await fake.close()
      await dropDatabase(databaseUrl)
    }
  }, 480_000)
})
