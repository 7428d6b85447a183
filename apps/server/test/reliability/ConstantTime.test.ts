import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import type * as Crypto from "node:crypto"
import { vi } from "vitest"
import type * as KeySecretModule from "../../src/auth/KeySecret.ts"
import type { RunningServer } from "../support/TestServer.ts"
import { record } from "./Reliability.ts"

vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>()
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) }
})

describe("reliability: key hashes are compared in constant time", () => {
  let server: RunningServer
  let KeySecret: typeof KeySecretModule
  let timingSafeEqual: ReturnType<typeof vi.mocked<typeof Crypto.timingSafeEqual>>
  beforeAll(async () => {
    // The suite may share modules between files: the gateway's modules are loaded again here, so
    // they see the spied crypto.
    vi.resetModules()
    timingSafeEqual = vi.mocked((await import("node:crypto")).timingSafeEqual)
    KeySecret = await import("../../src/auth/KeySecret.ts")
    const { startServer } = await import("../support/TestServer.ts")
    server = await startServer({ env: { SWITCHYARD_RATE_LIMIT: "off" } })
  })
  afterAll(async () => {
    record("constant-time", { requests: 3 })
    await server?.close()
  })

  it("sameHash goes through timingSafeEqual for equal and unequal digests alike, at every position of difference", () => {
    const digest = KeySecret.hash(KeySecret.generate())
    for (let position = 0; position < digest.length; position += 7) {
      const other = digest.slice(0, position) + (digest[position] === "0" ? "1" : "0") + digest.slice(position + 1)
      timingSafeEqual.mockClear()
      assert.isFalse(KeySecret.sameHash(digest, other))
      assert.strictEqual(timingSafeEqual.mock.calls.length, 1, `difference at ${position}`)
      const [x, y] = timingSafeEqual.mock.calls[0]!
      assert.strictEqual((x as Buffer).length, 64)
      assert.strictEqual((y as Buffer).length, 64)
    }
    timingSafeEqual.mockClear()
    assert.isTrue(KeySecret.sameHash(digest, digest.slice()))
    assert.strictEqual(timingSafeEqual.mock.calls.length, 1)
  })

  it("every authenticated request compares the stored hash with timingSafeEqual", async () => {
    for (const key of [server.apiKey, server.managementKey]) {
      timingSafeEqual.mockClear()
      const response = await fetch(`${server.baseUrl}/key`, { headers: { authorization: `Bearer ${key}` } })
      assert.strictEqual(response.status, 200)
      const compared = timingSafeEqual.mock.calls.map(([x, y]) => [Buffer.from(x as Uint8Array).toString(), Buffer.from(y as Uint8Array).toString()])
      assert.deepInclude(compared, [KeySecret.hash(key), KeySecret.hash(key)])
    }
    timingSafeEqual.mockClear()
    const unknown = await fetch(`${server.baseUrl}/key`, { headers: { authorization: `Bearer ${KeySecret.generate()}` } })
    assert.strictEqual(unknown.status, 401)
  })
})
