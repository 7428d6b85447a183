import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as RequestHost from "../../src/http/RequestHost.ts"
import { call, type InternServer, rawRequest, startInternServer } from "./InternServer.ts"

describe("behind a reverse proxy (SWITCHYARD_TRUST_PROXY=true)", () => {
  let server: InternServer
  let id: string
  beforeAll(async () => {
    server = await startInternServer({ env: { SWITCHYARD_REGIONAL_HOSTS: "eu.switchyard.test", SWITCHYARD_TRUST_PROXY: "true" } })
    id = (await call(server, "POST", "/interns", { body: { name: "proxied" } })).body.id
  })
  afterAll(() => server.close())

  it("the regional-host rule reads X-Forwarded-Host, which nginx sends while rewriting Host", async () => {
    for (const forwarded of ["eu.switchyard.test", "EU.switchyard.test:443", "eu.switchyard.test, edge.internal"]) {
      const answer = await rawRequest(server, {
        method: "GET",
        path: `/interns/${id}`,
        headers: { host: "127.0.0.1:8080", "x-forwarded-host": forwarded }
      })
      assert.strictEqual(answer.status, 403, forwarded)
      assert.strictEqual(answer.body.error.metadata.reason, "regional_host")
    }
    const primary = await rawRequest(server, {
      method: "GET",
      path: `/interns/${id}`,
      headers: { host: "eu.switchyard.test", "x-forwarded-host": "api.switchyard.test" }
    })
    assert.strictEqual(primary.status, 200, "the host the client asked for wins over the proxy's own")
    const direct = await rawRequest(server, { method: "GET", path: `/interns/${id}`, headers: { host: "eu.switchyard.test" } })
    assert.strictEqual(direct.status, 403, "without X-Forwarded-Host, Host still counts")
  })

  it("reads Host only unless the proxy is trusted", () => {
    const headers = { host: "api.switchyard.test", "x-forwarded-host": "eu.switchyard.test" }
    assert.strictEqual(RequestHost.of(headers, false), "api.switchyard.test")
    assert.strictEqual(RequestHost.of(headers, true), "eu.switchyard.test")
    assert.strictEqual(RequestHost.of({ host: "api.switchyard.test", "x-forwarded-host": " " }, true), "api.switchyard.test")
  })
})
