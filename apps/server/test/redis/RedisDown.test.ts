import { assert, describe, it } from "@effect/vitest"
import * as Net from "node:net"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { freePort, type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { startStoreRelay } from "../support/StoreRelay.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

const redisUrl = process.env.REDIS_URL

const withGateway = async (
  redis: string,
  rate: string,
  f: (server: ServerProcess, apiKey: string) => Promise<void>
) => {
  const apiKey = KeySecret.generate()
  const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
  const server = await startServerProcess({
    REDIS_URL: redis,
    SWITCHYARD_RATE_LIMIT: rate,
    SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: KeySecret.generate(),
    SWITCHYARD_DATA_DIR: tempDir("redis-down"),
    SWITCHYARD_LOG_LEVEL: "info",
    ...(databaseUrl !== undefined ? { DATABASE_URL: databaseUrl } : { DATABASE_URL: "" })
  })
  try {
    await f(server, apiKey)
  } finally {
    await server.stop()
    if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
  }
}

const timedKey = async (server: ServerProcess, apiKey: string) => {
  const started = performance.now()
  const response = await fetch(`${server.baseUrl}/key`, {
    headers: { authorization: `Bearer ${apiKey}` },
    signal: AbortSignal.timeout(15_000)
  })
  await response.body?.cancel()
  return { status: response.status, ms: performance.now() - started, remaining: response.headers.get("x-ratelimit-remaining") }
}

const health = async (server: ServerProcess) => {
  const response = await fetch(`${server.baseUrl}/health`, { signal: AbortSignal.timeout(5_000) })
  return { status: response.status, body: await response.json() as { status: string; checks: { redis: { status: string } } } }
}

const until = async (server: ServerProcess, what: string, ms: number, check: () => Promise<boolean>) => {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (await check()) return Date.now() - (deadline - ms)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`${what} did not happen within ${ms} ms; the gateway's log:\n${server.stdout().split("\n").slice(-20).join("\n")}`)
}

const outageLines = (server: ServerProcess) => server.stdout().split("\n").filter((line) => line.includes("Redis is unavailable")).length

describe.skipIf(redisUrl === undefined)("a gateway whose Redis goes away", () => {
  it("keyed requests are answered within 1 s while Redis is silent; one warning line; limits come back on their own", async () => {
    const relay = await startStoreRelay(redisUrl!)
    try {
      await withGateway(relay.url, "1000/1h", async (server, apiKey) => {
        for (let i = 0; i < 20; i++) {
          const healthy = await timedKey(server, apiKey)
          assert.strictEqual(healthy.status, 200)
          assert.strictEqual(healthy.remaining, String(999 - i))
        }
        assert.deepStrictEqual((await health(server)).body.checks.redis, { status: "up" })

        // Connections stay open and nothing comes back: each command waits for its 100 ms bound
        // until the circuit opens, then fails at once.
        relay.silence()
        const during = []
        for (let i = 0; i < 30; i++) during.push(await timedKey(server, apiKey))
        for (const r of during) {
          assert.strictEqual(r.status, 200)
          assert.isBelow(r.ms, 1000, JSON.stringify(during))
          // This process's own limiter counts meanwhile.
          assert.isNotNull(r.remaining)
        }
        const down = await health(server)
        assert.strictEqual(down.status, 200)
        assert.strictEqual(down.body.status, "degraded")
        assert.deepStrictEqual(down.body.checks.redis, { status: "down" })
        assert.strictEqual(outageLines(server), 1, server.stdout())

        // Redis is reachable again: the gateway finds it without being asked (background ping).
        await relay.cut()
        await relay.open()
        const backAfter = await until(server, "Redis found again", 10_000, async () => (await health(server)).body.checks.redis.status === "up")
        assert.isBelow(backAfter, 10_000)
        assert.strictEqual((await health(server)).body.status, "ok")
        // Shared counting again: Redis still holds this key's bucket from before the outage (980
        // left, a few refilled since), not this process's own (970 left after the outage's 30).
        const after = await timedKey(server, apiKey)
        assert.strictEqual(after.status, 200)
        assert.isAbove(Number(after.remaining), 970)
        assert.isAtMost(Number(after.remaining), 990)
        assert.match(server.stdout(), /Redis answers again/u)
        assert.strictEqual(outageLines(server), 1)
      })
    } finally {
      await relay.cut()
    }
  }, 120_000)

  it("a connection black-holed by a partition is replaced: once the partition heals, Redis is found again without a reset ever arriving", async () => {
    const relay = await startStoreRelay(redisUrl!)
    try {
      await withGateway(relay.url, "1000/1h", async (server, apiKey) => {
        assert.strictEqual((await timedKey(server, apiKey)).status, 200)
        relay.silence()
        await until(server, "the outage noticed", 10_000, async () => (await health(server)).body.checks.redis.status === "down")
        // New connections pass again; the gateway's own connection stays open and silent.
        relay.heal()
        await until(server, "Redis found again", 15_000, async () => (await health(server)).body.checks.redis.status === "up")
        const after = await timedKey(server, apiKey)
        assert.strictEqual(after.status, 200)
        // Counted in Redis again: the bucket from before the partition, not this process's own.
        assert.isAbove(Number(after.remaining), 990)
        assert.strictEqual(outageLines(server), 1)
      })
    } finally {
      await relay.cut()
    }
  }, 120_000)

  it("starts and answers keyed requests promptly when Redis never answers (a TCP server that accepts and says nothing)", async () => {
    const sockets = new Set<Net.Socket>()
    const silent = Net.createServer((socket) => {
      sockets.add(socket)
      socket.on("error", () => {})
    })
    const port = await freePort()
    await new Promise<void>((resolve) => silent.listen(port, "127.0.0.1", resolve))
    try {
      await withGateway(`redis://127.0.0.1:${port}`, "5/60s", async (server, apiKey) => {
        const answers = []
        for (let i = 0; i < 8; i++) answers.push(await timedKey(server, apiKey))
        for (const r of answers) assert.isBelow(r.ms, 1000, JSON.stringify(answers))
        // The allowance is still enforced, by this process's own limiter.
        assert.deepStrictEqual(answers.map((r) => r.status), [200, 200, 200, 200, 200, 429, 429, 429])
        const h = await health(server)
        assert.strictEqual(h.status, 200)
        assert.strictEqual(h.body.status, "degraded")
        assert.deepStrictEqual(h.body.checks.redis, { status: "down" })
      })
    } finally {
      for (const s of sockets) s.destroy()
      silent.close()
    }
  }, 120_000)

  it("starts and answers promptly when nothing listens on Redis's port", async () => {
    const port = await freePort()
    await withGateway(`redis://127.0.0.1:${port}`, "1000/60s", async (server, apiKey) => {
      for (let i = 0; i < 5; i++) {
        const r = await timedKey(server, apiKey)
        assert.strictEqual(r.status, 200)
        assert.isBelow(r.ms, 1000)
      }
      assert.deepStrictEqual((await health(server)).body.checks.redis, { status: "down" })
      const metrics = await fetch(`${server.baseUrl.replace(/\/api\/v1$/u, "")}/metrics`).then((r) => r.text())
      assert.match(metrics, /^switchyard_dependency_up\{dependency="redis"\} 0$/mu)
    })
  }, 120_000)
})
