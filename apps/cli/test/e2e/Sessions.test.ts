import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { CookieJar, signIn } from "../../../server/test/support/IdentityProvider.ts"
import { people, type SsoGateway, startSsoGateway } from "../../../server/test/support/SsoGateway.ts"
import { runCli } from "../support/Cli.ts"

describe("switchyard sessions (the binary against a gateway with single sign-on)", () => {
  let gw: SsoGateway
  let env: Record<string, string>
  beforeAll(async () => {
    gw = await startSsoGateway()
    env = { SWITCHYARD_BASE_URL: `${gw.origin}/api/v1`, SWITCHYARD_API_KEY: gw.managementKey }
  })
  afterAll(async () => {
    await gw?.close()
  })

  it("lists who is signed in, ends one session, then all of a person's", async () => {
    const jars = [new CookieJar(), new CookieJar()]
    for (const jar of jars) await signIn(jar, `${gw.origin}/ui/auth/login`, { login: people.fin.email, password: people.fin.password })
    const listed = await runCli(["sessions", "list", "--json"], { env })
    assert.strictEqual(listed.code, 0, listed.stderr)
    const sessions = JSON.parse(listed.stdout).data as Array<{ id: string; user: { id: string; email: string } }>
    assert.strictEqual(sessions.length, 2)
    assert.strictEqual(sessions[0]!.user.email, "fin@example.com")
    const table = await runCli(["sessions", "list"], { env })
    assert.include(table.stdout, "fin@example.com")
    const one = await runCli(["sessions", "revoke", sessions[0]!.id], { env })
    assert.strictEqual(one.code, 0, one.stderr)
    assert.include(one.stdout, "Ended 1 session")
    const all = await runCli(["sessions", "revoke", "--user", sessions[1]!.user.id, "--json"], { env })
    assert.deepStrictEqual(JSON.parse(all.stdout), { deleted: 1 })
    assert.strictEqual(JSON.parse((await runCli(["sessions", "list", "--json"], { env })).stdout).data.length, 0)
    assert.strictEqual((await runCli(["sessions", "revoke"], { env })).code, 2)
  })
})
