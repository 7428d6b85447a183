import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Option } from "effect"
import { parsePolicy } from "../../src/http/RateLimit.ts"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

const get = (server: RunningServer, path: string, key: string) =>
  fetch(`${server.baseUrl}${path}`, { headers: { authorization: `Bearer ${key}` } })

describe("SWITCHYARD_RATE_LIMIT", () => {
  it("parses requests per interval, and off", () => {
    assert.deepStrictEqual(parsePolicy("600/60s"), Option.some({ requests: 600, intervalMillis: 60_000, interval: "60s" }))
    assert.deepStrictEqual(parsePolicy(" 10 / m "), Option.some({ requests: 10, intervalMillis: 60_000, interval: "1m" }))
    assert.deepStrictEqual(parsePolicy("5/500ms"), Option.some({ requests: 5, intervalMillis: 500, interval: "500ms" }))
    assert.deepStrictEqual(parsePolicy("off"), Option.none())
    for (const bad of ["", "600", "600/60", "0/1s", "-1/1s", "1.5/1s", "ten/1s", "1/1d"]) assert.isUndefined(parsePolicy(bad), bad)
  })

  it("a malformed value stops the server from starting", async () => {
    const error = await startServer({ env: { SWITCHYARD_RATE_LIMIT: "lots" } }).then((s) => s.close().then(() => undefined), (e: unknown) => e)
    assert.include(String(error), "SWITCHYARD_RATE_LIMIT")
  })
})

describe(`per-key rate limit in process (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_RATE_LIMIT: "5/60s" } })
  })
  afterAll(() => server.close())

  it("admits the allowance with X-RateLimit-* headers, then answers 429 with Retry-After in the envelope", async () => {
    const started = Date.now()
    for (let i = 0; i < 5; i++) {
      const response = await get(server, "/key", server.apiKey)
      assert.strictEqual(response.status, 200)
      assert.strictEqual(response.headers.get("x-ratelimit-limit"), "5")
      assert.strictEqual(response.headers.get("x-ratelimit-remaining"), String(4 - i))
      const reset = Number(response.headers.get("x-ratelimit-reset"))
      assert.isAtLeast(reset, started)
      assert.isAtMost(reset, Date.now() + 60_000)
    }
    const refused = await get(server, "/key", server.apiKey)
    assert.strictEqual(refused.status, 429)
    const body = await refused.json() as { error: { code: number; message: string } }
    assert.strictEqual(body.error.code, 429)
    assert.include(body.error.message, "5 requests per 60s")
    const retryAfter = Number(refused.headers.get("retry-after"))
    assert.isAtLeast(retryAfter, 1)
    assert.isAtMost(retryAfter, 12)
    assert.strictEqual(refused.headers.get("x-ratelimit-remaining"), "0")
    assert.strictEqual(refused.headers.get("x-ratelimit-limit"), "5")
  })

  it("counts each key separately and reports the policy in GET /key", async () => {
    const response = await get(server, "/key", server.managementKey)
    assert.strictEqual(response.status, 200)
    const body = await response.json() as { data: { rate_limit: { requests: number; interval: string } } }
    assert.deepStrictEqual([body.data.rate_limit.requests, body.data.rate_limit.interval], [5, "60s"])
  })

  it("does not count requests without a valid key", async () => {
    for (let i = 0; i < 8; i++) assert.strictEqual((await get(server, "/keys", "sk-sy-v1-unknown-key-0000")).status, 401)
  })
})

describe("rate limit off", () => {
  it("sends no rate-limit headers", async () => {
    const server = await startServer({ env: { SWITCHYARD_RATE_LIMIT: "off" } })
    try {
      for (let i = 0; i < 3; i++) {
        const response = await get(server, "/key", server.apiKey)
        assert.strictEqual(response.status, 200)
        assert.isNull(response.headers.get("x-ratelimit-limit"))
      }
    } finally {
      await server.close()
    }
  })
})
