import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Client from "openid-client"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  browse,
  CookieJar,
  type RunningIdentityProvider,
  startIdentityProvider
} from "../support/IdentityProvider.ts"

// The fixture itself, driven by the certified client the gateway uses: a sign-in through its login
// page, groups in the ID token and at userinfo, a refresh that sees changed groups, rotated keys.
describe("the test identity provider", () => {
  let idp: RunningIdentityProvider
  let callback: Http.Server
  let redirectUri: string

  beforeAll(async () => {
    callback = Http.createServer((_req, res) => {
      res.writeHead(200)
      res.end("ok")
    })
    await new Promise<void>((resolve) => callback.listen(0, "127.0.0.1", resolve))
    redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/cb`
    idp = await startIdentityProvider({
      users: [{ sub: "ada", email: "ada@example.com", name: "Ada", password: "pw-ada", groups: ["admins"] }],
      client: { client_id: "gw", client_secret: "secret-gw", redirect_uris: [redirectUri] }
    })
  })
  afterAll(async () => {
    await idp.close()
    callback.closeAllConnections()
    await new Promise<void>((resolve) => callback.close(() => resolve()))
  })

  const config = async () => {
    const c = await Client.discovery(new URL(idp.issuer), "gw", undefined, Client.ClientSecretBasic("secret-gw"), {
      execute: [Client.allowInsecureRequests]
    })
    Client.enableNonRepudiationChecks(c)
    return c
  }

  const signIn = async (c: Client.Configuration, password = "pw-ada") => {
    const verifier = Client.randomPKCECodeVerifier()
    const state = Client.randomState()
    const nonce = Client.randomNonce()
    const url = Client.buildAuthorizationUrl(c, {
      redirect_uri: redirectUri,
      scope: "openid email profile",
      code_challenge: await Client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: "S256",
      state,
      nonce
    })
    const jar = new CookieJar()
    const page = await browse(jar, url.toString())
    const action = /action="([^"]+)"/.exec(page.body)?.[1] ?? ""
    const back = await browse(jar, new URL(action, page.url).toString(), { form: { login: "ada@example.com", password } })
    return { back, verifier, state, nonce }
  }

  it("signs a person in, with groups in the ID token, and answers changed groups at the next refresh", async () => {
    const c = await config()
    const { back, verifier, state, nonce } = await signIn(c)
    expect(back.url.startsWith(redirectUri)).toBe(true)
    const tokens = await Client.authorizationCodeGrant(c, new URL(back.url), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce
    })
    expect(tokens.claims()).toMatchObject({ sub: "ada", email: "ada@example.com", name: "Ada", groups: ["admins"] })
    expect(tokens.refresh_token).toBeTypeOf("string")
    idp.setGroups("ada", ["finance"])
    const refreshed = await Client.refreshTokenGrant(c, tokens.refresh_token ?? "")
    expect(refreshed.claims()?.groups).toEqual(["finance"])
    expect(idp.refreshGrants()).toBe(1)
    const info = await Client.fetchUserInfo(c, refreshed.access_token, "ada")
    expect(info.groups).toEqual(["finance"])
    idp.setGroups("ada", ["admins"])
  })

  it("refuses a wrong password on its login page", async () => {
    const c = await config()
    const { back } = await signIn(c, "wrong")
    expect(back.body).toContain("Wrong login or password.")
  })

  it("signs with a rotated key that a client picks up, and a spoiled token fails the client's checks", async () => {
    const c = await config()
    await idp.rotateKeys({ keepOld: false })
    const first = await signIn(c)
    const tokens = await Client.authorizationCodeGrant(c, new URL(first.back.url), {
      pkceCodeVerifier: first.verifier,
      expectedState: first.state,
      expectedNonce: first.nonce
    })
    expect(tokens.claims()?.sub).toBe("ada")
    idp.spoilIdTokens({ foreignKey: true })
    const second = await signIn(c)
    await expect(
      Client.authorizationCodeGrant(c, new URL(second.back.url), {
        pkceCodeVerifier: second.verifier,
        expectedState: second.state,
        expectedNonce: second.nonce
      })
    ).rejects.toThrow()
    idp.spoilIdTokens({ claims: (claims) => ({ ...claims, aud: "someone-else" }) })
    const third = await signIn(c)
    await expect(
      Client.authorizationCodeGrant(c, new URL(third.back.url), {
        pkceCodeVerifier: third.verifier,
        expectedState: third.state,
        expectedNonce: third.nonce
      })
    ).rejects.toThrow("unexpected JWT claim value")
    idp.spoilIdTokens(undefined)
  })
})
