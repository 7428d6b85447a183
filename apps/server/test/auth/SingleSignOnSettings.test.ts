import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { describe, expect, it } from "vitest"
import { CookieJar, signIn } from "../support/IdentityProvider.ts"
import { people, startSsoGateway } from "../support/SsoGateway.ts"
import { startServer, tempDir } from "../support/TestServer.ts"

describe("single sign-on settings", () => {
  it("without a refresh token, the session ends at the first re-read of the roles: the person signs in again", async () => {
    const gw = await startSsoGateway({ refreshTokens: false, keySignIn: true })
    try {
      const options = await (await fetch(`${gw.origin}/ui/auth/options`)).json()
      expect(options).toMatchObject({ sso: true, key: true })
      const jar = new CookieJar()
      await signIn(jar, `${gw.origin}/ui/auth/login`, { login: people.ada.email, password: people.ada.password })
      const me = () => fetch(`${gw.origin}/api/v1/me`, { headers: { cookie: jar.header(gw.origin) } })
      expect((await me()).status).toBe(200)
      await gw.adjust("5 minutes")
      const ended = await me()
      expect(ended.status).toBe(401)
      expect(((await ended.json()) as any).error.message).toContain("no refresh token")
    } finally {
      await gw.close()
    }
  })

  it("authorization_params go on the authorization request (Google's offline access), beside the gateway's own state, nonce and PKCE", async () => {
    const gw = await startSsoGateway({ authorizationParams: { access_type: "offline", prompt: "consent" } })
    try {
      const login = await fetch(`${gw.origin}/ui/auth/login`, { redirect: "manual" })
      const to = new URL(login.headers.get("location")!)
      expect(to.searchParams.get("access_type")).toBe("offline")
      expect(to.searchParams.get("prompt")).toBe("consent")
      for (const own of ["state", "nonce", "code_challenge"]) expect(to.searchParams.get(own)).toMatch(/^[\w-]{20,}$/u)
    } finally {
      await gw.close()
    }
  })

  it("authorization_params cannot set what the gateway sets: the start names the field", async () => {
    const dir = tempDir("sso-params")
    const config = NodePath.join(dir, "switchyard.json")
    Fs.writeFileSync(config, JSON.stringify({
      sso: { issuer: "https://login.example.com", client_id: "switchyard", client_secret_env: "SOME_OIDC_SECRET", authorization_params: { state: "fixed" } }
    }))
    await expect(startServer({ env: { SWITCHYARD_CONFIG: config, SOME_OIDC_SECRET: "x" } })).rejects.toThrow(/state is set by the gateway/)
  })

  it("a gateway whose sso section names an unset secret variable does not start, and says which", async () => {
    const dir = tempDir("sso-settings")
    const config = NodePath.join(dir, "switchyard.json")
    Fs.writeFileSync(config, JSON.stringify({
      sso: { issuer: "https://login.example.com", client_id: "switchyard", client_secret_env: "NO_SUCH_OIDC_SECRET" }
    }))
    await expect(startServer({ env: { SWITCHYARD_CONFIG: config } })).rejects.toThrow(/NO_SUCH_OIDC_SECRET/)
  })

  it("without an sso section, the console keeps its key sign-in and the cookie opens nothing", async () => {
    const server = await startServer()
    try {
      expect(await (await fetch(`${server.origin}/ui/auth/options`)).json()).toEqual({ sso: false, key: true, login_url: null })
      const me = await fetch(`${server.baseUrl}/me`, { headers: { authorization: `Bearer ${server.managementKey}` } })
      expect(await me.json()).toMatchObject({ user: null, role: "admin", via: "management_key", sign_in: { sso: false, key: true } })
      const cookie = await fetch(`${server.baseUrl}/me`, { headers: { cookie: "switchyard_session=anything" } })
      expect(cookie.status).toBe(401)
    } finally {
      await server.close()
    }
  })
})
