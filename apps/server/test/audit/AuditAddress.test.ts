import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

/**
 * An audit entry's `ip`: the socket's address, unless the gateway is told it sits behind a proxy
 * (`SWITCHYARD_TRUST_PROXY=true`), when it is the first address of `X-Forwarded-For`.
 */
describe(`the address an audit entry records (${storeKind})`, () => {
  const servers: Array<RunningServer> = []
  let direct: RunningServer
  let proxied: RunningServer
  beforeAll(async () => {
    direct = await startServer()
    proxied = await startServer({ env: { SWITCHYARD_TRUST_PROXY: "true" } })
    servers.push(direct, proxied)
  })
  afterAll(() => Promise.all(servers.map((server) => server.close())))

  const addressOfACreditGrant = async (server: RunningServer) => {
    const headers = { authorization: `Bearer ${server.managementKey}`, "content-type": "application/json" }
    const added = await fetch(`${server.baseUrl}/credits`, {
      method: "POST",
      headers: { ...headers, "x-forwarded-for": "203.0.113.7, 10.0.0.1" },
      body: JSON.stringify({ amount: 1 })
    })
    assert.strictEqual(added.status, 200)
    const listed = await fetch(`${server.baseUrl}/audit-log?limit=1`, { headers })
    const [latest] = (await listed.json() as { data: Array<{ action: string; ip: string | null }> }).data
    assert.strictEqual(latest!.action, "credits.add")
    return latest!.ip
  }

  it("is the socket's address when no proxy is trusted, whatever X-Forwarded-For says", async () => {
    assert.strictEqual(await addressOfACreditGrant(direct), "127.0.0.1")
  })

  it("is the client X-Forwarded-For names first behind a trusted proxy", async () => {
    assert.strictEqual(await addressOfACreditGrant(proxied), "203.0.113.7")
  })
})
