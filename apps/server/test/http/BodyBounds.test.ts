import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

// Bodies cost what they are worth (issue #37): nesting is bounded from the bytes, before a body
// becomes objects, on the dedicated model routes and the HttpApi routes alike; a management route
// takes a small body, a model route a large one.
describe(`request bodies, bounded by depth and by route (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  const post = async (path: string, key: string, body: string, method = "POST") => {
    const response = await fetch(`${server.origin}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      body
    })
    return { status: response.status, body: await response.json() as any }
  }

  const deep = (levels: number) => `{"model":"switchyard/local-embed","input":${"[".repeat(levels)}${"]".repeat(levels)}}`

  it("a body nested deeper than 64 levels is a 400 in the envelope on every route kind; 64 levels is decoded as usual", async () => {
    for (const [path, key] of [
      ["/api/v1/embeddings", server.apiKey],
      ["/api/v1/rerank", server.apiKey],
      ["/api/v1/embeddings/plan", server.apiKey],
      ["/api/v1/keys", server.managementKey],
      ["/api/v1/interns", server.managementKey]
    ] as const) {
      // Checked as it streams in (200 KB), and once read (a small body, read whole first).
      for (const levels of [100_000, 64]) {
        const refused = await post(path, key, deep(levels))
        assert.strictEqual(refused.status, 400, `${path}, ${levels} levels: ${JSON.stringify(refused.body)}`)
        assert.match(refused.body.error.message, /nests deeper than 64 levels/u, `${path}, ${levels} levels`)
      }
    }
    // Within the bound the schema says what is wrong, as before.
    const shallow = await post("/api/v1/embeddings", server.apiKey, deep(63))
    assert.strictEqual(shallow.status, 400)
    assert.notMatch(shallow.body.error.message, /nests deeper/u)
    // Brackets inside strings do not count.
    const inString = await post("/api/v1/embeddings", server.apiKey, JSON.stringify({ model: "switchyard/local-embed", input: "[".repeat(1000) }))
    assert.strictEqual(inString.status, 200, JSON.stringify(inString.body))
  })

  it("a management route takes at most 256 KiB; a model route takes a batch of several megabytes", async () => {
    const big = JSON.stringify({ name: "x".repeat(300 * 1024) })
    const refused = await post("/api/v1/keys", server.managementKey, big)
    assert.strictEqual(refused.status, 413, JSON.stringify(refused.body))
    const batch = JSON.stringify({ model: "switchyard/local-embed", input: Array.from({ length: 512 }, (_, i) => `item ${i} ${"y".repeat(4200)}`) })
    assert.isAbove(batch.length, 2 * 1024 * 1024)
    const served = await post("/api/v1/embeddings", server.apiKey, batch)
    assert.notStrictEqual(served.status, 413, JSON.stringify(served.body).slice(0, 300))
  })
})
