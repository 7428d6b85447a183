import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Result } from "effect"
import * as Os from "node:os"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { DatabaseSync } from "node:sqlite"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as Workers from "../../src/Workers.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import { childrenOf, type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { storeKind, tempDir } from "../support/TestServer.ts"

const tokens = (n: number) => Array.from({ length: n }, (_, i) => i + 1)

const until = async (check: () => boolean, ms: number) => {
  const deadline = Date.now() + ms
  while (!check() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100))
  return check()
}

describe("SWITCHYARD_WORKERS", () => {
  it("reads a count, auto as the machine's cores, and refuses anything else with a sentence", () => {
    assert.strictEqual(Workers.parse(undefined), 1)
    assert.strictEqual(Workers.parse(" 3 "), 3)
    assert.strictEqual(Workers.parse("auto", 6), 6)
    for (const bad of ["0", "-1", "two", "1.5", "1000"]) assert.include(String(Workers.parse(bad)), "SWITCHYARD_WORKERS must be")
  })

  it("is parsed once, into the count the gateway, the money store and the batches read (Workers.count)", () => {
    const count = (env: Record<string, string>) => Effect.runSync(Effect.result(Workers.count.parse(ConfigProvider.fromEnv({ env }))))
    assert.deepStrictEqual(count({}), Result.succeed(1))
    assert.deepStrictEqual(count({ SWITCHYARD_WORKERS: "1" }), Result.succeed(1))
    assert.deepStrictEqual(count({ SWITCHYARD_WORKERS: " 4 " }), Result.succeed(4))
    assert.deepStrictEqual(count({ SWITCHYARD_WORKERS: "auto" }), Result.succeed(Os.availableParallelism()))
    for (const bad of ["0", "two", "auto2", "257"]) {
      const parsed = count({ SWITCHYARD_WORKERS: bad })
      assert.isTrue(Result.isFailure(parsed), bad)
      if (Result.isFailure(parsed)) assert.include(parsed.failure.message, `SWITCHYARD_WORKERS must be a number of processes from 1 to 256, or auto`)
    }
  })

  it("a value that is not a count stops the start with one line saying so (exit 1)", async () => {
    await startServerProcess({ SWITCHYARD_WORKERS: "two", SWITCHYARD_DATA_DIR: tempDir("workers-bad") }, 20_000).then(
      async (server) => {
        await server.stop()
        assert.fail("the gateway started with SWITCHYARD_WORKERS=two")
      },
      (error: Error) => assert.include(error.message, `SWITCHYARD_WORKERS must be a number of processes from 1 to 256, or auto (the machine's cores); got "two"`)
    )
  })

  describe.skipIf(storeKind !== "sqlite" || process.platform !== "linux")("two workers on one SQLite file", () => {
    it("serve one port; a key that can afford 50 of 200 concurrent requests is charged exactly 50; the primary holds the data directory and starts a killed worker again", async () => {
      const fake = await FakeOpenAi.start()
      const dataDir = tempDir("workers")
      const configPath = NodePath.join(tempDir("config"), "switchyard.json")
      Fs.writeFileSync(configPath, JSON.stringify({
        providers: [provider("alpha", fake.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" }, input_modalities: ["text", "tokens"] })])]
      }))
      const managementKey = KeySecret.generate()
      const env = {
        SWITCHYARD_WORKERS: "2",
        SWITCHYARD_DATA_DIR: dataDir,
        SWITCHYARD_CONFIG: configPath,
        SWITCHYARD_RATE_LIMIT: "off",
        SWITCHYARD_SECRET_KEY: "a".repeat(64),
        ALPHA_API_KEY: "sk-fake",
        SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey
      }
      let server: ServerProcess | undefined
      try {
        server = await startServerProcess(env)
        const gateway = server
        assert.isTrue(await until(() => childrenOf(gateway.pid).length === 2, 20_000), "the primary runs two workers")
        // The second starts once the first listens (migrations and bootstrap are the first's).
        const listening = () => gateway.stdout().split("Switchyard listening").length - 1
        assert.isTrue(await until(() => listening() === 2, 30_000), "both workers listen")
        const call = (path: string, body: unknown, key: string) =>
          fetch(`${gateway.baseUrl}${path}`, {
            method: body === undefined ? "GET" : "POST",
            headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
            ...(body === undefined ? {} : { body: JSON.stringify(body) })
          }).then(async (r) => ({ status: r.status, json: await r.json() as any }))
        assert.strictEqual((await call("/credits", { amount: 10 }, managementKey)).status, 200)
        const created = await call("/keys", { name: "shared", limit: 0.05 }, managementKey)
        assert.strictEqual(created.status, 201)
        const secret = created.json.key as string
        const replies = await Promise.all(Array.from({ length: 200 }, () =>
          call("/embeddings", { model: "acme/embed", input: tokens(1000) }, secret)
        ))
        const statuses = JSON.stringify(replies.reduce<Record<number, number>>((n, r) => ({ ...n, [r.status]: (n[r.status] ?? 0) + 1 }), {}))
        assert.strictEqual(replies.filter((r) => r.status === 200).length, 50, statuses)
        assert.strictEqual(replies.filter((r) => r.status === 402).length, 150, statuses)
        // Both workers admitted requests on the key: each from its own lease (a hold it owns).
        const file = new DatabaseSync(NodePath.join(dataDir, "switchyard.db"), { readOnly: true })
        const owners = (file.prepare("SELECT COUNT(DISTINCT owner) AS n FROM holds").get() as { n: number }).n
        file.close()
        assert.strictEqual(owners, 2, "both workers served the key")
        const record = (await call(`/keys/${created.json.data.hash}`, undefined, managementKey)).json.data
        assert.strictEqual(record.usage, 0.05)
        assert.strictEqual(record.limit_remaining, 0)
        assert.strictEqual((await call("/credits", undefined, managementKey)).json.data.total_usage, 0.05)

        // One gateway per data directory: the primary holds its lock for all its workers.
        await startServerProcess({ ...env, SWITCHYARD_WORKERS: "1" }, 20_000).then(
          async (other) => {
            await other.stop()
            assert.fail("a second gateway started on the same data directory")
          },
          (error: Error) => assert.include(error.message, "is in use by process")
        )

        // A worker killed is started again, and the gateway keeps serving.
        const [victim] = childrenOf(gateway.pid)
        process.kill(victim!, "SIGKILL")
        assert.isTrue(
          await until(() => {
            const now = childrenOf(gateway.pid)
            return now.length === 2 && !now.includes(victim!)
          }, 20_000),
          "the killed worker was started again"
        )
        assert.include(gateway.output(), `exited (SIGKILL); starting it again`)
        assert.strictEqual((await call("/key", undefined, managementKey)).status, 200)
        const workers = childrenOf(gateway.pid)
        await gateway.stop()
        server = undefined
        assert.isTrue(await until(() => workers.every((pid) => !Fs.existsSync(`/proc/${pid}`)), 10_000), "every worker stopped with it")
      } finally {
        await server?.stop()
        await fake.close()
        Fs.rmSync(dataDir, { recursive: true, force: true })
      }
    }, 180_000)
  })
})
