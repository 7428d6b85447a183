import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

describe(`a known path asked with another method (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  const ask = async (method: string, path: string) => {
    const response = await fetch(`${server.baseUrl}${path}`, { method, headers: { authorization: `Bearer ${server.apiKey}` } })
    return { status: response.status, allow: response.headers.get("allow"), body: await response.json() as any }
  }

  it("answers 405 with Allow in the error envelope", async () => {
    const embeddings = await ask("DELETE", "/embeddings")
    assert.strictEqual(embeddings.status, 405)
    assert.strictEqual(embeddings.allow, "POST")
    assert.strictEqual(embeddings.body.error.code, 405)
    assert.include(embeddings.body.error.message, "POST")
    const workspace = await ask("PUT", "/workspaces/default")
    assert.strictEqual(workspace.status, 405)
    assert.strictEqual(workspace.allow, "DELETE, GET, HEAD, PATCH")
    const suspend = await ask("GET", "/interns/some-intern/suspend")
    assert.strictEqual(suspend.status, 405)
    assert.strictEqual(suspend.allow, "POST")
    assert.isString(suspend.body.error.code, "an intern path answers in the intern envelope")
  })

  it("still answers 404 for a path that does not exist, and serves the method a path takes", async () => {
    const missing = await ask("GET", "/no-such-thing")
    assert.strictEqual(missing.status, 404)
    assert.isNull(missing.allow)
    assert.strictEqual(missing.body.error.code, 404)
    assert.strictEqual((await ask("GET", "/models")).status, 200)
  })

  it("answers 405 for a method no route serves, on any path; a path the router would cut at `;` is a 404, never another route", async () => {
    for (const path of ["/no-such-thing", "/embeddings", "/health"]) {
      const traced = await ask("OPTIONS", path)
      assert.strictEqual(traced.status, 405, path)
      assert.strictEqual(traced.body.error.code, 405)
    }
    assert.strictEqual((await ask("OPTIONS", "/no-such-thing")).allow, "")
    assert.strictEqual((await ask("PROPFIND", "/health")).allow, "GET, HEAD")
    const cut = await fetch(`${server.baseUrl}/models/;/x/endpoints`)
    assert.strictEqual(cut.status, 404)
    assert.strictEqual(((await cut.json()) as any).error.code, 404)
    assert.strictEqual((await fetch(`${server.baseUrl}/models;x`)).status, 404)
  })
})
