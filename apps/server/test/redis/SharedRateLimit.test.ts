import { assert, describe, it } from "@effect/vitest"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

const redisUrl = process.env.REDIS_URL

const replicas = async (rate: string, f: (servers: readonly [ServerProcess, ServerProcess], apiKey: string) => Promise<void>) => {
  const apiKey = KeySecret.generate()
  const managementKey = KeySecret.generate()
  const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
  const envFor = () => ({
    REDIS_URL: redisUrl!,
    SWITCHYARD_RATE_LIMIT: rate,
    SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_DATA_DIR: tempDir("replica"),
    ...(databaseUrl !== undefined ? { DATABASE_URL: databaseUrl } : { DATABASE_URL: "" })
  })
  const started: Array<ServerProcess> = []
  try {
    started.push(await startServerProcess(envFor()))
    started.push(await startServerProcess(envFor()))
    await f([started[0]!, started[1]!], apiKey)
  } finally {
    await Promise.all(started.map((s) => s.stop()))
    if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
  }
}

const getKey = (server: ServerProcess, apiKey: string) =>
  fetch(`${server.baseUrl}/key`, { headers: { authorization: `Bearer ${apiKey}` } })

describe.skipIf(redisUrl === undefined)("rate limits shared through Redis by two server processes", () => {
  it("two replicas count one allowance: remaining falls across both, then both answer 429", async () => {
    await replicas("6/60s", async (servers, apiKey) => {
      const remaining: Array<string | null> = []
      const statuses: Array<number> = []
      for (let i = 0; i < 10; i++) {
        const response = await getKey(servers[i % 2]!, apiKey)
        statuses.push(response.status)
        remaining.push(response.headers.get("x-ratelimit-remaining"))
        await response.body?.cancel()
      }
      assert.deepStrictEqual(statuses, [200, 200, 200, 200, 200, 200, 429, 429, 429, 429])
      assert.deepStrictEqual(remaining, ["5", "4", "3", "2", "1", "0", "0", "0", "0", "0"])
    })
  }, 180_000)

  // 40 at a time: enough for both replicas to take from the allowance at once, not so many that a
  // two-core machine's event loops hold Redis's answers past the command bound (250 ms), after
  // which a replica counts on its own limiter, as it does while Redis is away (RateLimit.ts): a
  // burst of 200 at once passed 60 once in CI.
  it("200 requests, 40 at a time, split over both replicas with an allowance of 50: exactly 50 pass", async () => {
    await replicas("50/1h", async (servers, apiKey) => {
      const responses: Array<{ readonly status: number; readonly server: number; readonly retryAfter: string | null }> = []
      for (let wave = 0; wave < 5; wave++) {
        responses.push(...await Promise.all(Array.from({ length: 40 }, (_, i) =>
          getKey(servers[i % 2]!, apiKey).then(async (r) => {
            await r.body?.cancel()
            return { status: r.status, server: i % 2, retryAfter: r.headers.get("retry-after") }
          })
        )))
      }
      const passed = responses.filter((r) => r.status === 200)
      assert.strictEqual(passed.length, 50)
      assert.strictEqual(responses.filter((r) => r.status === 429).length, 150)
      for (const server of [0, 1]) assert.strictEqual(responses.filter((r) => r.server === server).length, 100)
      for (const r of responses.filter((r) => r.status === 429)) assert.isAtLeast(Number(r.retryAfter), 1)
    })
  }, 180_000)
})
