import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { CookieJar, signIn } from "../support/IdentityProvider.ts"
import { people, type SsoGateway, startSsoGateway } from "../support/SsoGateway.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"

// Two replicas on one PostgreSQL: a session opened on one is honoured by the other, and ending it
// on either ends it on both at once.
describe.skipIf(storeKind !== "postgres")("single sign-on sessions across two replicas on PostgreSQL", () => {
  let databaseUrl: string
  let one: SsoGateway
  let two: SsoGateway
  beforeAll(async () => {
    databaseUrl = await freshDatabase()
    one = await startSsoGateway({ databaseUrl })
    two = await startSsoGateway({ databaseUrl, idp: one.idp })
  }, 120_000)
  afterAll(async () => {
    await two?.close()
    await one?.close()
    if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
  })

  const me = async (gw: SsoGateway, cookie: string) =>
    (await fetch(`${gw.origin}/api/v1/me`, { headers: { cookie: `switchyard_session=${cookie}` } })).status

  it("DELETE /api/v1/sessions/{id} on one replica ends the session on both", async () => {
    const jar = new CookieJar()
    await signIn(jar, `${one.origin}/ui/auth/login`, { login: people.ada.email, password: people.ada.password })
    const cookie = jar.get(one.origin, "switchyard_session") ?? ""
    assert.isAbove(cookie.length, 20)
    assert.strictEqual(await me(one, cookie), 200)
    assert.strictEqual(await me(two, cookie), 200)
    const admin = { authorization: `Bearer ${one.managementKey}` }
    const listed = (await (await fetch(`${two.origin}/api/v1/sessions`, { headers: admin })).json()) as any
    const session = listed.data.find((s: any) => s.user.sub === "ada")
    const ended = await fetch(`${two.origin}/api/v1/sessions/${session.id}`, { method: "DELETE", headers: admin })
    assert.deepStrictEqual(await ended.json(), { deleted: 1 })
    assert.strictEqual(await me(one, cookie), 401)
    assert.strictEqual(await me(two, cookie), 401)
  }, 60_000)
})
