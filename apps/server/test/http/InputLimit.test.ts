import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

const model = "switchyard/local-embed"
const inputs = (n: number) => Array.from({ length: n }, (_, i) => `item ${i}`)

const post = async (server: RunningServer, path: string, body: unknown) => {
  const response = await fetch(`${server.origin}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })
  return { status: response.status, body: await response.json() as any }
}

// One request cannot ask for more than it may hold (issue #50): the number of inputs is capped
// (`SWITCHYARD_MAX_INPUTS`, 2,048 by default like OpenAI), and a request over the cap is a 400 in
// the envelope that names the limit and the ways on, before any upstream call or charge.
describe(`the cap on inputs per request (${storeKind})`, () => {
  let server: RunningServer
  let small: RunningServer
  beforeAll(async () => {
    server = await startServer()
    small = await startServer({ env: { SWITCHYARD_MAX_INPUTS: "4" } })
  })
  afterAll(async () => {
    await server.close()
    await small.close()
  })

  it("takes 2,048 inputs by default and refuses 2,049 with a 400 naming the limit, the split and batches", async () => {
    const served = await post(server, "/api/v1/embeddings", { model, input: inputs(2048) })
    assert.strictEqual(served.status, 200, JSON.stringify(served.body).slice(0, 300))
    assert.strictEqual(served.body.data.length, 2048)
    const refused = await post(server, "/api/v1/embeddings", { model, input: inputs(2049) })
    assert.strictEqual(refused.status, 400, JSON.stringify(refused.body).slice(0, 300))
    assert.strictEqual(refused.body.error.code, 400)
    assert.match(refused.body.error.message, /2049 items; a request takes at most 2048 \(SWITCHYARD_MAX_INPUTS\)/u)
    assert.match(refused.body.error.message, /\/api\/v1\/batches/u)
    assert.deepStrictEqual(refused.body.error.metadata, { field: "input", max_inputs: 2048, inputs: 2049 })
  })

  it("follows SWITCHYARD_MAX_INPUTS on the call and on its plan; a single string or token array is one input", async () => {
    assert.strictEqual((await post(small, "/api/v1/embeddings", { model, input: inputs(4) })).status, 200)
    assert.strictEqual((await post(small, "/api/v1/embeddings", { model, input: "one long text" })).status, 200)
    assert.strictEqual((await post(small, "/api/v1/embeddings", { model, input: [1, 2, 3, 4, 5, 6, 7] })).status, 200)
    for (const path of ["/api/v1/embeddings", "/api/v1/embeddings/plan"]) {
      const refused = await post(small, path, { model, input: inputs(5) })
      assert.strictEqual(refused.status, 400, `${path}: ${JSON.stringify(refused.body)}`)
      assert.match(refused.body.error.message, /at most 4 \(SWITCHYARD_MAX_INPUTS\)/u, path)
    }
  })

  it("charges nothing for a refused request, where a served one shows in the activity", async () => {
    const activity = async () => {
      const response = await fetch(`${small.origin}/api/v1/activity`, { headers: { authorization: `Bearer ${small.managementKey}` } })
      assert.strictEqual(response.status, 200)
      return response.json()
    }
    const before = await activity()
    assert.strictEqual((await post(small, "/api/v1/embeddings", { model, input: inputs(50) })).status, 400)
    assert.deepStrictEqual(await activity(), before)
    assert.strictEqual((await post(small, "/api/v1/embeddings", { model, input: inputs(3) })).status, 200)
    assert.notDeepEqual(await activity(), before)
  })
})
