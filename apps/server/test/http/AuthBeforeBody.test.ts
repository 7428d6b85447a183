import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { sendBytes } from "../reliability/RawHttp.ts"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"
import { fill, request } from "../support/Tenants.ts"

// Issue 65: a request without a key was answered from its body (a POST /interns nested deeper
// than 64 levels got 400, and an error line). Every route that needs a key now checks it before
// anything reads the body: for each route group of the served OpenAPI document, each operation
// that needs a key is sent, without one and with a malformed one, (a) a body that never arrives
// whole and (b) a body that any reader would refuse: both are 401 at once.

const bodyTimeoutMs = 20_000

interface Operation {
  readonly method: string
  readonly path: string
  readonly id: string
}

describe(`no route reads a body before its key is checked (${storeKind})`, () => {
  let server: RunningServer
  const groups = new Map<string, Array<Operation>>()
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_BODY_TIMEOUT_MS: String(bodyTimeoutMs), SWITCHYARD_RATE_LIMIT: "off" } })
    const document = (await request(server.origin, { method: "GET", path: "/api/v1/openapi.json" })).json
    for (const [path, methods] of Object.entries(document.paths as Record<string, Record<string, any>>)) {
      for (const [method, operation] of Object.entries(methods)) {
        if ((operation.security ?? []).length === 0) continue
        const group = operation.tags[0] as string
        groups.set(group, [...(groups.get(group) ?? []), { method: method.toUpperCase(), path, id: operation.operationId }])
      }
    }
  }, 60_000)
  afterAll(() => server.close())

  const deep = `{"name":${"[".repeat(100)}${"]".repeat(100)}}`

  const refusedAtOnce = async (operation: Operation, authorization: string) => {
    const host = new URL(server.origin).host
    const target = fill(operation.path, {})
    const head = (length: number) =>
      `${operation.method} ${target} HTTP/1.1\r\nHost: ${host}\r\n${authorization}Content-Type: application/json\r\nContent-Length: ${length}\r\n\r\n`
    const started = performance.now()
    // (a) Ten bytes of a thousand, then nothing: a route that read the body would wait for the rest.
    const stalled = await sendBytes(server.origin, `${head(1000)}{"name":"x`, bodyTimeoutMs)
    const stalledMs = performance.now() - started
    // (b) Nested past the bound: a route that read it would answer 400.
    const nested = await sendBytes(server.origin, `${head(Buffer.byteLength(deep))}${deep}`, bodyTimeoutMs)
    const what = `${operation.method} ${operation.path} (${operation.id}) ${authorization.trim() || "no key"}`
    assert.strictEqual(stalled.status, 401, `${what}, stalled body: ${stalled.raw.slice(0, 300)}`)
    assert.isBelow(stalledMs, 5_000, `${what}: answered without waiting for the body`)
    assert.strictEqual(nested.status, 401, `${what}, nested body: ${nested.raw.slice(0, 300)}`)
  }

  it("finds the route groups of the document", () => {
    assert.includeMembers([...groups.keys()], ["keys", "interns", "embeddings", "workspaces", "files", "batches", "providerAdmin"])
  })

  for (const group of ["keys", "interns", "credits", "byok", "embeddings", "rerank", "models", "workspaces", "activity", "providers", "providerAdmin", "audit", "files", "batches", "cohere"]) {
    it(`${group}: every operation that needs a key answers 401 without reading the body`, async () => {
      const operations = groups.get(group) ?? [...groups.entries()].find(([name]) => name.toLowerCase().startsWith(group.toLowerCase()))?.[1]
      assert.isDefined(operations, `the group ${group} among ${[...groups.keys()].join(", ")}`)
      for (const operation of operations!) {
        await refusedAtOnce(operation, "")
        await refusedAtOnce(operation, "Authorization: Bearer not-a-key\r\n")
      }
    }, 60_000)
  }
})
