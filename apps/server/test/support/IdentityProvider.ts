/**
 * A real OpenID provider for tests: `oidc-provider` (the certified Node implementation) on
 * 127.0.0.1 at a free port, with its own login page (login and password checked), consent granted
 * on the person's behalf, refresh tokens, and the `groups` claim in the ID token and at userinfo.
 *
 * A test can change a person's groups (the next refresh or userinfo answers the new ones), rotate
 * the signing keys, and spoil the next ID tokens the token endpoint answers (another key, another
 * audience, an expiry in the past) to see the gateway refuse them.
 */
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Jose from "jose"
import Provider, { type Configuration, type JWK } from "oidc-provider"

export interface IdentityUser {
  readonly sub: string
  readonly email: string
  readonly name: string
  readonly password: string
  readonly groups: ReadonlyArray<string>
}

export interface IdentityClient {
  readonly client_id: string
  readonly client_secret: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly post_logout_redirect_uris?: ReadonlyArray<string>
}

/** How the next ID tokens from the token endpoint are spoiled: claims changed, or signed by a key the IdP never published. */
interface IdTokenSpoiler {
  readonly claims?: (claims: Jose.JWTPayload) => Jose.JWTPayload
  readonly foreignKey?: boolean
}

export interface RunningIdentityProvider {
  /** The issuer URL (`http://127.0.0.1:{port}`), for the gateway's `sso.issuer`. */
  readonly issuer: string
  /** Replaces a person's groups: the next token, refresh or userinfo answer carries the new ones. */
  readonly setGroups: (sub: string, groups: ReadonlyArray<string>) => void
  /** A new signing key first in the published set; `keepOld: false` drops the old ones too. */
  readonly rotateKeys: (options?: { readonly keepOld?: boolean }) => Promise<void>
  /** Spoils the ID token of every token answer until called again with `undefined`. */
  readonly spoilIdTokens: (spoiler: IdTokenSpoiler | undefined) => void
  /** How many refresh-token grants the token endpoint has answered. */
  readonly refreshGrants: () => number
  readonly close: () => Promise<void>
}

const newSigningKey = async (): Promise<JWK> => {
  const { privateKey } = Crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
  const jwk = privateKey.export({ format: "jwk" }) as JWK
  return { ...jwk, kid: Crypto.randomUUID(), alg: "RS256", use: "sig" }
}

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const loginPage = (uid: string, message?: string) => `<!doctype html>
<html><head><title>Sign in to the test IdP</title></head><body>
<h1>Sign in</h1>${message === undefined ? "" : `<p role="alert">${escapeHtml(message)}</p>`}
<form method="post" action="/interaction/${uid}/login">
<label>Login <input name="login" autocomplete="username"></label>
<label>Password <input name="password" type="password" autocomplete="current-password"></label>
<button type="submit">Sign in</button>
</form></body></html>`

const readForm = (req: Http.IncomingMessage): Promise<URLSearchParams> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(new URLSearchParams(Buffer.concat(chunks).toString("utf8"))))
    req.on("error", reject)
  })

interface State {
  readonly users: Map<string, IdentityUser>
  keys: Array<JWK>
  provider: Provider
  spoiler: IdTokenSpoiler | undefined
  refreshGrants: number
}

const configuration = (state: State, client: IdentityClient, refreshTokens: boolean): Configuration => ({
  clients: [
    {
      client_id: client.client_id,
      client_secret: client.client_secret,
      redirect_uris: [...client.redirect_uris],
      post_logout_redirect_uris: [...(client.post_logout_redirect_uris ?? [])],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "client_secret_basic"
    }
  ],
  findAccount: (_ctx, sub) => {
    const user = state.users.get(sub)
    if (user === undefined) return undefined
    return {
      accountId: sub,
      claims: () => {
        // Read at the time of asking, so a changed group shows at the next refresh.
        const now = state.users.get(sub) ?? user
        return { sub, email: now.email, email_verified: true, name: now.name, groups: [...now.groups] }
      }
    }
  },
  claims: { openid: ["sub", "groups"], email: ["email", "email_verified"], profile: ["name"] },
  conformIdTokenClaims: false,
  issueRefreshToken: async (_ctx, c) => refreshTokens && c.grantTypeAllowed("refresh_token"),
  features: { devInteractions: { enabled: false }, rpInitiatedLogout: { enabled: true, logoutSource, postLogoutSuccessSource } },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  pkce: { required: () => true },
  jwks: { keys: state.keys },
  cookies: { keys: ["identity-provider-test-cookie-key"] },
  ttl: { AccessToken: 3600, IdToken: 3600, RefreshToken: 86400, Grant: 86400, Session: 86400, Interaction: 600 }
})

/** Grants what the client asked for on the person's behalf (a first-party client needs no consent page). */
const grantConsent = async (
  provider: Provider,
  req: Http.IncomingMessage,
  res: Http.ServerResponse,
  details: Awaited<ReturnType<Provider["interactionDetails"]>>
) => {
  const accountId = details.session?.accountId ?? ""
  const grant =
    details.grantId === undefined
      ? new provider.Grant({ accountId, clientId: String(details.params.client_id) })
      : ((await provider.Grant.find(details.grantId)) ??
        new provider.Grant({ accountId, clientId: String(details.params.client_id) }))
  const missing = details.prompt.details as {
    missingOIDCScope?: Array<string>
    missingOIDCClaims?: Array<string>
    missingResourceScopes?: Record<string, Array<string>>
  }
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "))
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims)
  for (const [indicator, scopes] of Object.entries(missing.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(" "))
  }
  const grantId = await grant.save()
  await provider.interactionFinished(req, res, { consent: { grantId } }, { mergeWithLastSubmission: true })
}

const interaction = async (state: State, req: Http.IncomingMessage, res: Http.ServerResponse) => {
  const provider = state.provider
  const details = await provider.interactionDetails(req, res)
  if (req.method === "POST" && req.url?.endsWith("/login")) {
    const form = await readForm(req)
    const login = form.get("login") ?? ""
    const user = [...state.users.values()].find((u) => u.email === login || u.sub === login)
    if (user === undefined || user.password !== (form.get("password") ?? "")) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
      res.end(loginPage(details.uid, "Wrong login or password."))
      return
    }
    await provider.interactionFinished(req, res, { login: { accountId: user.sub } }, { mergeWithLastSubmission: false })
    return
  }
  if (details.prompt.name === "consent") {
    await grantConsent(provider, req, res, details)
    return
  }
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" })
  res.end(loginPage(details.uid))
}

/** Rewrites the ID token of a token endpoint answer as the spoiler says, before it leaves. */
const spoilTokenAnswer = (state: State, res: Http.ServerResponse) => {
  const end = res.end.bind(res)
  const chunks: Array<Buffer> = []
  const write = res.write.bind(res)
  res.write = ((chunk: unknown) => {
    if (chunk !== undefined && chunk !== null) chunks.push(Buffer.from(chunk as Uint8Array))
    return true
  }) as typeof res.write
  res.end = ((chunk?: unknown) => {
    if (chunk !== undefined && chunk !== null && typeof chunk !== "function") chunks.push(Buffer.from(chunk as Uint8Array))
    const body = Buffer.concat(chunks).toString("utf8")
    void rewriteIdToken(state, body).then((rewritten) => {
      if (!res.headersSent) res.setHeader("content-length", Buffer.byteLength(rewritten))
      res.write = write
      end(rewritten)
    })
    return res
  }) as typeof res.end
}

const rewriteIdToken = async (state: State, body: string): Promise<string> => {
  const spoiler = state.spoiler
  let answer: { id_token?: string }
  try {
    answer = JSON.parse(body)
  } catch {
    return body
  }
  if (spoiler === undefined || typeof answer.id_token !== "string") return body
  const header = Jose.decodeProtectedHeader(answer.id_token)
  const claims = Jose.decodeJwt(answer.id_token)
  const changed = spoiler.claims ? spoiler.claims(claims) : claims
  const jwk = spoiler.foreignKey ? { ...(await newSigningKey()), kid: header.kid } : state.keys[0]
  const key = await Jose.importJWK(jwk as Jose.JWK, "RS256")
  const idToken = await new Jose.SignJWT(changed).setProtectedHeader({ alg: "RS256", kid: header.kid ?? "" }).sign(key)
  return JSON.stringify({ ...answer, id_token: idToken })
}

/**
 * The IdP's own sign-out confirmation, as a provider shows it (oidc-provider's default page loads
 * web fonts from the internet, which a test machine cannot reach): the provider's form and a
 * "Yes, sign me out" button that submits it.
 */
const logoutSource = (ctx: { body: unknown }, form: string) => {
  ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign out</title></head><body><main>` +
    `<h1>Sign out of the identity provider?</h1>${form}` +
    `<button autofocus type="submit" form="op.logoutForm" value="yes" name="logout">Yes, sign me out</button>` +
    `<button type="submit" form="op.logoutForm">No, stay signed in</button></main></body></html>`
}

/** The page after a sign-out with no way back to the client. */
const postLogoutSuccessSource = (ctx: { body: unknown }) => {
  ctx.body = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Signed out</title></head><body><main><h1>Signed out</h1></main></body></html>`
}

/** Starts the IdP; `close` stops it. */
export const startIdentityProvider = async (options: {
  readonly users: ReadonlyArray<IdentityUser>
  readonly client: IdentityClient
  /** Whether it issues refresh tokens (default true). */
  readonly refreshTokens?: boolean
}): Promise<RunningIdentityProvider> => {
  let handler: Http.RequestListener = (_req, res) => {
    res.writeHead(503)
    res.end()
  }
  const server = Http.createServer((req, res) => handler(req, res))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const build = (s: State) => {
    const provider = new Provider(issuer, configuration(s, options.client, options.refreshTokens ?? true))
    provider.on("grant.success", (ctx) => {
      if (ctx.oidc.params?.grant_type === "refresh_token") s.refreshGrants += 1
    })
    return provider
  }
  const state = {
    users: new Map(options.users.map((u) => [u.sub, u])),
    keys: [await newSigningKey()],
    spoiler: undefined,
    refreshGrants: 0
  } as unknown as State
  state.provider = build(state)
  handler = (req, res) => {
    const url = req.url ?? "/"
    if (url.startsWith("/interaction/")) {
      interaction(state, req, res).catch((error: unknown) => {
        if (!res.headersSent) res.writeHead(400, { "content-type": "text/plain" })
        res.end(String(error instanceof Error ? error.message : error))
      })
      return
    }
    if (req.method === "POST" && url.startsWith("/token")) {
      state.spoiler === undefined || spoilTokenAnswer(state, res)
    }
    state.provider.callback()(req, res)
  }
  return {
    issuer,
    setGroups: (sub, groups) => {
      const user = state.users.get(sub)
      if (user === undefined) throw new Error(`no user ${sub}`)
      state.users.set(sub, { ...user, groups: [...groups] })
    },
    rotateKeys: async (rotation) => {
      const fresh = await newSigningKey()
      state.keys = rotation?.keepOld === false ? [fresh] : [fresh, ...state.keys]
      // The default in-memory adapter is shared by every Provider in the process: sessions,
      // grants and refresh tokens outlive the rebuild.
      state.provider = build(state)
    },
    spoilIdTokens: (spoiler) => {
      state.spoiler = spoiler
    },
    refreshGrants: () => state.refreshGrants,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}


/** A cookie jar for driving sign-ins over HTTP as a browser would (per host, paths ignored). */
export class CookieJar {
  private readonly jar = new Map<string, Map<string, string>>()
  header(url: string): string {
    const cookies = this.jar.get(new URL(url).host)
    return cookies === undefined ? "" : [...cookies].map(([k, v]) => `${k}=${v}`).join("; ")
  }
  get(url: string, name: string): string | undefined {
    return this.jar.get(new URL(url).host)?.get(name)
  }
  set(url: string, name: string, value: string): void {
    const host = new URL(url).host
    const cookies = this.jar.get(host) ?? new Map<string, string>()
    cookies.set(name, value)
    this.jar.set(host, cookies)
  }
  take(url: string, response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";")
      const at = pair.indexOf("=")
      const name = pair.slice(0, at).trim()
      const value = pair.slice(at + 1).trim()
      const gone = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a))
      const host = new URL(url).host
      const cookies = this.jar.get(host) ?? new Map<string, string>()
      if (gone || value === "") cookies.delete(name)
      else cookies.set(name, value)
      this.jar.set(host, cookies)
    }
  }
}

export interface Visit {
  readonly url: string
  readonly status: number
  readonly body: string
  readonly response: Response
}

/** GET (or POST a form) and follow redirects with the jar, as a browser does; the last answer. */
export const browse = async (
  jar: CookieJar,
  start: string,
  init?: { readonly method?: string; readonly form?: Record<string, string>; readonly headers?: Record<string, string> }
): Promise<Visit> => {
  let url = start
  let method = init?.method ?? (init?.form ? "POST" : "GET")
  let body: string | undefined = init?.form ? new URLSearchParams(init.form).toString() : undefined
  for (let hop = 0; hop < 20; hop++) {
    const headers: Record<string, string> = { ...(init?.headers ?? {}), cookie: jar.header(url) }
    if (body !== undefined) headers["content-type"] = "application/x-www-form-urlencoded"
    const response = await fetch(url, { method, headers, redirect: "manual", ...(body === undefined ? {} : { body }) })
    jar.take(url, response)
    const location = response.headers.get("location")
    if (response.status >= 300 && response.status < 400 && location !== null) {
      await response.arrayBuffer()
      url = new URL(location, url).toString()
      method = "GET"
      body = undefined
      continue
    }
    return { url, status: response.status, body: await response.text(), response }
  }
  throw new Error(`too many redirects from ${start}`)
}

/**
 * Signs a person in through the IdP's own login page: follows the gateway's login redirect to the
 * IdP, posts the form, and follows back to the gateway. The jar then holds the gateway's cookie.
 */
export const signIn = async (
  jar: CookieJar,
  loginUrl: string,
  person: { readonly login: string; readonly password: string }
): Promise<Visit> => {
  const page = await browse(jar, loginUrl)
  const action = /action="([^"]+)"/.exec(page.body)?.[1]
  if (action === undefined) return page
  return browse(jar, new URL(action, page.url).toString(), {
    form: { login: person.login, password: person.password }
  })
}
