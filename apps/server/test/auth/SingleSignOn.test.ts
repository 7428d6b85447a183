import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browse, CookieJar, signIn } from "../support/IdentityProvider.ts"
import { clientSecret, people, type SsoGateway, startSsoGateway } from "../support/SsoGateway.ts"
import { storeKind } from "../support/TestServer.ts"

// Sign-in through a real OpenID provider (oidc-provider on 127.0.0.1), its refusals, the roles at
// the management API, and no secret in any answer or log line.
describe(`single sign-on (${storeKind})`, () => {
  let gw: SsoGateway
  const answers: Array<string> = []

  beforeAll(async () => {
    gw = await startSsoGateway()
  })
  afterAll(async () => {
    await gw?.close()
  })

  const loginAs = async (who: keyof typeof people) => {
    const jar = new CookieJar()
    const page = await signIn(jar, `${gw.origin}/ui/auth/login`, { login: people[who].email, password: people[who].password })
    answers.push(page.body)
    return { jar, page, cookie: jar.get(gw.origin, "switchyard_session") }
  }

  const api = async (jar: CookieJar, method: string, path: string, init: { body?: unknown; headers?: Record<string, string> } = {}) => {
    const response = await fetch(`${gw.origin}/api/v1${path}`, {
      method,
      headers: {
        cookie: jar.header(gw.origin),
        ...(init.body === undefined ? {} : { "content-type": "application/json" }),
        ...init.headers
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) })
    })
    const text = await response.text()
    answers.push(text)
    return { status: response.status, body: text.length > 0 ? JSON.parse(text) : undefined }
  }

  const audit = async (action: string) => {
    const response = await fetch(`${gw.origin}/api/v1/audit-log?action=${action}`, {
      headers: { authorization: `Bearer ${gw.managementKey}` }
    })
    return ((await response.json()) as any).data as Array<any>
  }

  it("offers the sign-in the config asks for, before anyone signs in", async () => {
    const options = await (await fetch(`${gw.origin}/ui/auth/options`)).json()
    expect(options).toEqual({ sso: true, key: false, login_url: "/ui/auth/login" })
  })

  it("signs an admin in through the IdP's login page: a session cookie, /me with the role and a CSRF token, audited", async () => {
    const { jar, page, cookie } = await loginAs("ada")
    expect(page.url).toBe(`${gw.origin}/ui/`)
    expect(cookie).toBeTypeOf("string")
    const me = await api(jar, "GET", "/me")
    expect(me.status).toBe(200)
    expect(me.body).toMatchObject({
      user: { sub: "ada", email: "ada@example.com", name: "Ada Admin" },
      role: "admin",
      via: "session",
      sign_in: { sso: true, key: false }
    })
    expect(me.body.csrf_token).toBeTypeOf("string")
    const created = await audit("session.create")
    expect(created.some((e) => e.actor.user?.sub === "ada" && typeof e.actor.session_id === "string")).toBe(true)
    // An admin changes things with the CSRF token; the change names the person in the audit log.
    const made = await api(jar, "POST", "/keys", { body: { name: "ada's key" }, headers: { "x-csrf-token": me.body.csrf_token } })
    expect(made.status).toBe(201)
    const keyCreated = await audit("key.create")
    expect(keyCreated[0].actor.user).toEqual({ sub: "ada", email: "ada@example.com", name: "Ada Admin" })
    const verify = await fetch(`${gw.origin}/api/v1/audit-log/verify`, { headers: { authorization: `Bearer ${gw.managementKey}` } })
    expect(((await verify.json()) as any).ok).toBe(true)
  })

  it("refuses a person in no mapped group, and one of a domain not allowed, with a page that says why, audited", async () => {
    const nob = await loginAs("nob")
    expect(nob.page.status).toBe(403)
    expect(nob.page.body).toContain("is in no group that has a role here")
    expect(nob.cookie).toBeUndefined()
    const out = await loginAs("out")
    expect(out.page.status).toBe(403)
    expect(out.page.body).toContain("The email domain of out@other.org is not allowed here")
    const refused = await audit("session.refuse")
    expect(refused.map((e) => e.after.sub)).toEqual(expect.arrayContaining(["nob", "out"]))
  })

  it("refuses an ID token signed by another key, for another audience, or expired", async () => {
    const spoilers = [
      { foreignKey: true },
      { claims: (c: any) => ({ ...c, aud: "someone-else" }) },
      { claims: (c: any) => ({ ...c, exp: Math.floor(Date.now() / 1000) - 3600, iat: Math.floor(Date.now() / 1000) - 7200 }) }
    ]
    for (const spoiler of spoilers) {
      gw.idp.spoilIdTokens(spoiler)
      const { page, cookie } = await loginAs("ada")
      expect(page.status).toBe(403)
      expect(page.body).toContain("failed its checks")
      expect(cookie).toBeUndefined()
    }
    gw.idp.spoilIdTokens(undefined)
    const refused = await audit("session.refuse")
    expect(refused.filter((e) => String(e.after.reason).includes("failed its checks")).length).toBeGreaterThanOrEqual(3)
  })

  it("refuses a replayed state", async () => {
    const jar = new CookieJar()
    const first = await browse(jar, `${gw.origin}/ui/auth/login`)
    const action = /action="([^"]+)"/.exec(first.body)?.[1] ?? ""
    // Stop at the gateway's callback: the URL the IdP sends back.
    let url = new URL(action, first.url).toString()
    let response = await fetch(url, {
      method: "POST",
      headers: { cookie: jar.header(url), "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ login: people.ada.email, password: people.ada.password }).toString(),
      redirect: "manual"
    })
    jar.take(url, response)
    while (!(response.headers.get("location") ?? "").startsWith(`${gw.origin}/ui/auth/callback`)) {
      url = new URL(response.headers.get("location") ?? "", url).toString()
      response = await fetch(url, { headers: { cookie: jar.header(url) }, redirect: "manual" })
      jar.take(url, response)
    }
    const callback = response.headers.get("location") ?? ""
    const once = await browse(jar, callback)
    expect(once.url).toBe(`${gw.origin}/ui/`)
    jar.set(gw.origin, "switchyard_sso_state", new URL(callback).searchParams.get("state") ?? "")
    const again = await browse(jar, callback)
    expect(again.status).toBe(400)
    expect(again.body).toContain("unknown, expired or already used")
  })

  it("refuses a tampered cookie, a change without the CSRF token, a cross-site POST, a viewer's PATCH and a member's call on another workspace", async () => {
    const tampered = new CookieJar()
    tampered.set(gw.origin, "switchyard_session", "not-a-session")
    const bad = await api(tampered, "GET", "/me")
    expect(bad.status).toBe(401)
    expect(bad.body.error.message).toContain("Your session has ended")

    const ada = await loginAs("ada")
    const token = (await api(ada.jar, "GET", "/me")).body.csrf_token
    const noCsrf = await api(ada.jar, "POST", "/keys", { body: { name: "x" } })
    expect(noCsrf.status).toBe(403)
    expect(noCsrf.body.error.message).toContain("x-csrf-token")
    const crossSite = await api(ada.jar, "POST", "/keys", { body: { name: "x" }, headers: { "x-csrf-token": token, origin: "https://evil.example" } })
    expect(crossSite.status).toBe(403)
    expect(crossSite.body.error.message).toContain("Cross-site")

    const fin = await loginAs("fin")
    const finMe = await api(fin.jar, "GET", "/me")
    expect(finMe.body.role).toBe("viewer")
    const activity = await api(fin.jar, "GET", "/activity")
    expect(activity.status).toBe(200)
    const workspaces = await api(fin.jar, "GET", "/workspaces")
    const id = workspaces.body.data[0].id
    const patch = await api(fin.jar, "PATCH", `/workspaces/${id}`, { body: { name: "renamed" }, headers: { "x-csrf-token": finMe.body.csrf_token } })
    expect(patch.status).toBe(403)
    expect(patch.body.error.message).toContain("instance role admin")

    // Another workspace, made by the admin: the member has no role in it.
    const other = await api(ada.jar, "POST", "/workspaces", { body: { name: "Other", slug: "other" }, headers: { "x-csrf-token": token } })
    expect(other.status).toBeLessThan(300)
    const sam = await loginAs("sam")
    const samMe = await api(sam.jar, "GET", "/me")
    expect(samMe.body.role).toBeNull()
    expect(samMe.body.workspaces).toEqual([{ id: expect.any(String), role: "member" }])
    const own = await api(sam.jar, "GET", "/keys")
    expect(own.status).toBe(200)
    const elsewhere = await api(sam.jar, "GET", `/keys?workspace_id=${other.body.data.id}`)
    expect(elsewhere.status).toBe(403)
    expect(elsewhere.body.error.message).toContain("needs the role member")
    const sessions = await api(sam.jar, "GET", "/sessions")
    expect(sessions.status).toBe(403)
    // Each refusal that reached a session is in the audit log, by the person; the unknown cookie's too.
    const refused = await audit("session.refuse")
    const reasons = (sub: string) => refused.filter((e) => e.actor.user?.sub === sub).map((e) => String(e.after.reason))
    expect(reasons("ada").some((r) => r.includes("x-csrf-token"))).toBe(true)
    expect(reasons("ada").some((r) => r.includes("Cross-site"))).toBe(true)
    expect(reasons("fin").some((r) => r.includes("instance role admin"))).toBe(true)
    expect(reasons("sam").some((r) => r.includes("needs the role member"))).toBe(true)
    expect(refused.some((e) => e.actor.user === undefined && String(e.after.reason).includes("Your session has ended"))).toBe(true)
  })

  it("ends a session by DELETE /sessions/{id}, and a removed admin is refused within 5 minutes of the clock", async () => {
    const ada = await loginAs("ada")
    const me = await api(ada.jar, "GET", "/me")
    const list = await api(ada.jar, "GET", `/sessions?user_id=${me.body.user.id}`)
    expect(list.status).toBe(200)
    expect(list.body.data.length).toBeGreaterThan(0)
    const fin = await loginAs("fin")
    const finSessions = (await api(ada.jar, "GET", "/sessions")).body.data.filter((s: any) => s.user.sub === "fin")
    expect(finSessions.length).toBeGreaterThan(0)
    for (const session of finSessions) {
      const ended = await api(ada.jar, "DELETE", `/sessions/${session.id}`, { headers: { "x-csrf-token": me.body.csrf_token } })
      expect(ended.body).toEqual({ deleted: 1 })
    }
    expect((await api(fin.jar, "GET", "/me")).status).toBe(401)
    const sam = await loginAs("sam")
    const samId = (await api(sam.jar, "GET", "/me")).body.user.id
    const all = await api(ada.jar, "DELETE", `/sessions?user_id=${samId}`, { headers: { "x-csrf-token": me.body.csrf_token } })
    expect(all.body.deleted).toBeGreaterThan(0)
    expect((await api(sam.jar, "GET", "/me")).status).toBe(401)
    expect((await audit("session.delete")).length).toBeGreaterThan(0)

    gw.idp.setGroups("ada", [])
    expect((await api(ada.jar, "GET", "/sessions")).status).toBe(200)
    await gw.adjust("5 minutes")
    const after = await api(ada.jar, "GET", "/sessions")
    expect(after.status).toBe(403)
    expect((await audit("role.change")).some((e) => e.actor.user?.sub === "ada")).toBe(true)
    gw.idp.setGroups("ada", people.ada.groups)
  })

  it("picks up the IdP's rotated signing keys", async () => {
    await gw.idp.rotateKeys({ keepOld: false })
    // The library refetches a JWKS at most once a minute on an unknown key: the gateway drops its
    // copy at the first token signed with one, so the next sign-in fetches the new keys.
    const first = await loginAs("ada")
    if (first.cookie === undefined) expect(first.page.body).toContain("its keys were rotated")
    const signedIn = first.cookie === undefined ? await loginAs("ada") : first
    expect(signedIn.page.url).toBe(`${gw.origin}/ui/`)
    expect(signedIn.cookie).toBeTypeOf("string")
  })

  it("signs out here and at the IdP", async () => {
    const ada = await loginAs("ada")
    const response = await fetch(`${gw.origin}/ui/auth/logout`, {
      method: "POST",
      headers: { cookie: ada.jar.header(gw.origin), origin: gw.origin },
      redirect: "manual"
    })
    expect(response.status).toBe(303)
    expect(response.headers.get("location")).toContain(`${gw.idp.issuer}/session/end`)
    expect((await api(ada.jar, "GET", "/me")).status).toBe(401)
  })

  it("signs out by fetch (the console's way): JSON naming the IdP's sign-out, the cookie expired", async () => {
    const ada = await loginAs("ada")
    const response = await fetch(`${gw.origin}/ui/auth/logout`, {
      method: "POST",
      headers: { cookie: ada.jar.header(gw.origin), origin: gw.origin, accept: "application/json" },
      redirect: "manual"
    })
    expect(response.status).toBe(200)
    expect(((await response.json()) as { readonly redirect_to: string }).redirect_to).toContain(`${gw.idp.issuer}/session/end`)
    expect(response.headers.get("set-cookie")).toMatch(/^switchyard_session=;/u)
    expect((await api(ada.jar, "GET", "/me")).status).toBe(401)
  })

  it("shows no token, cookie value or client secret in any answer or log line", async () => {
    const ada = await loginAs("ada")
    const cookie = ada.cookie ?? ""
    await api(ada.jar, "GET", "/me")
    const output = gw.output()
    const everything = `${output}\n${answers.join("\n")}`
    expect(cookie.length).toBeGreaterThan(20)
    expect(output).not.toContain(cookie)
    expect(everything).not.toContain(clientSecret)
    expect(everything).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}\./u)
  })

  it("ends a session left idle past its bound: an expired cookie is a 401", async () => {
    const sam = await loginAs("sam")
    const jar = sam.jar
    expect((await api(jar, "GET", "/me")).status).toBe(200)
    await gw.adjust("2 hours")
    const expired = await api(jar, "GET", "/me")
    expect(expired.status).toBe(401)
    expect(expired.body.error.message).toContain("Your session has ended")
    expect((await audit("session.delete")).some((e) => e.after?.reason === "expired")).toBe(true)
  })
})
