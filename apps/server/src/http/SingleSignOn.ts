/**
 * Single sign-on with OpenID Connect (the config file's `sso` section), through `openid-client`:
 * discovery from the issuer, the authorization code flow with PKCE, state and nonce, the ID
 * token's signature checked against the issuer's JWKS (rotated keys fetched when a token names
 * one), and `iss`, `aud`, `exp` and `nonce`. Sessions live in the store (SessionStore.ts); a
 * person's roles are re-read from the IdP with the refresh token every {@link rolesEvery}.
 */
import { Caller as CallerService, type CallerShape, type PersonShape } from "@switchyard/core/api/Authorization"
import * as Sso from "@switchyard/core/catalog/Sso"
import { Forbidden, Unauthorized } from "@switchyard/core/schema/ApiError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Clock, Config, Context, Data, Duration, Effect, Layer, Option, Redacted } from "effect"
import * as Client from "openid-client"
import * as CatalogLoader from "../catalog/CatalogLoader.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import { type Session, SessionStore } from "../store/sessions/SessionStore.ts"

export const cookieName = "switchyard_session"
export const stateCookieName = "switchyard_sso_state"

/** How long a session lives without a call, and at most. */
const idleFor = Duration.hours(2)
export const lastsFor = Duration.hours(12)
/** How often a person's roles are read again from the IdP. */
const rolesEvery = Duration.minutes(5)
/** How long a sign-in may take at the IdP. */
export const signInFor = Duration.minutes(10)

export interface SsoSettings {
  readonly sso: Sso.Sso
  readonly publicUrl: URL
  readonly secret: Redacted.Redacted<string>
}

/** Why a sign-in was refused: the page's words, and what the audit entry records. */
export class SignInRefused extends Data.TaggedError("SignInRefused")<{
  readonly reason: string
  readonly status: number
  readonly who?: { readonly sub?: string; readonly email?: string | null }
}> {}

const PublicUrlConfig = Config.URL("SWITCHYARD_PUBLIC_URL").pipe(Config.option)

/** The `sso` section cannot be used as it is (its secret's variable unset or empty). */
class SsoSettingsError extends Data.TaggedError("SsoSettingsError")<{ readonly message: string }> {}

const settings = Effect.gen(function*() {
  const loaded = yield* CatalogLoader.load
  const sso = loaded.catalog.sso
  if (sso === undefined) return undefined
  const secret = Option.getOrUndefined(yield* Config.option(Config.Redacted(sso.client_secret_env)))
  if (secret === undefined || Redacted.value(secret).trim() === "") {
    return yield* new SsoSettingsError({
      message: `sso.client_secret_env names ${sso.client_secret_env}, which is not set: set it to the client secret the identity provider gave`
    })
  }
  const host = yield* Config.String("SWITCHYARD_HOST").pipe(Config.withDefault("127.0.0.1"))
  const port = yield* Config.Port("SWITCHYARD_PORT").pipe(Config.withDefault(8080))
  const given = yield* PublicUrlConfig
  const publicUrl = Option.getOrElse(given, () => new URL(`http://${host.includes(":") ? `[${host}]` : host}:${port}`))
  return { sso, publicUrl, secret } satisfies SsoSettings
})

const groupsOf = (claims: Record<string, unknown> | undefined, claim: string): ReadonlyArray<string> | undefined => {
  const value = claims?.[claim]
  if (Array.isArray(value)) return value.filter((g): g is string => typeof g === "string")
  if (typeof value === "string") return [value]
  return undefined
}

/**
 * The clock sessions are timed by (idle and absolute expiry, the roles' re-read): the gateway's
 * own unless one is given (a test's clock, moved by the test).
 */
export class SessionClock extends Context.Service<SessionClock, Clock.Clock>()("@switchyard/server/http/SessionClock") {}

/** oauth4webapi's code for an ID token signed by a key its cached JWKS does not hold. */
const unknownKey = (e: unknown) => (e as { code?: unknown } | undefined)?.code === "OAUTH_KEY_SELECTION_FAILED"

/**
 * The IdP's configuration, discovered once (again after a failure, or once forgotten: its cached
 * JWKS goes with it, so keys the IdP rotated in are fetched at the next use).
 */
const discoverer = (found: SsoSettings | undefined) => {
  let discovered: Client.Configuration | undefined
  const configuration = Effect.suspend(() => {
    if (found === undefined) return Effect.fail(new SignInRefused({ reason: "Single sign-on is not configured", status: 404 }))
    if (discovered !== undefined) return Effect.succeed(discovered)
    return Effect.tryPromise({
      try: async () => {
        const insecure = found.sso.issuer.startsWith("http:")
        const auth = Client.ClientSecretBasic(Redacted.value(found.secret))
        const c = await Client.discovery(new URL(found.sso.issuer), found.sso.client_id, undefined, auth, {
          ...(insecure ? { execute: [Client.allowInsecureRequests] } : {}),
          timeout: 10
        })
        Client.enableNonRepudiationChecks(c)
        discovered = c
        return c
      },
      catch: (e) => new SignInRefused({ reason: `The identity provider could not be reached: ${(e as Error).message}`, status: 502 })
    })
  })
  const forget = () => {
    discovered = undefined
  }
  return { configuration, forget }
}

const person = (session: Session): PersonShape => ({
  sub: session.sub,
  email: session.email,
  name: session.name,
  sessionId: session.id,
  csrfToken: session.csrfToken,
  role: session.role,
  workspaces: session.workspaces
})
const callerOf = (session: Session): CallerShape => ({
  keyId: `session:${session.id}`,
  keyHash: `session:${session.id}`,
  kind: "management",
  userId: session.userId,
  workspaceId: session.homeWorkspaceId ?? "",
  scope: "user",
  person: person(session)
})

const rolesFrom = (sso: Sso.Sso, claims: Record<string, unknown> | undefined, info: Effect.Effect<Record<string, unknown> | undefined>) =>
  Effect.gen(function*() {
    const groups = groupsOf(claims, sso.groups_claim) ?? groupsOf(yield* info, sso.groups_claim) ?? []
    return Sso.rolesOf(sso, groups)
  })

interface RecheckDeps {
  readonly found: SsoSettings
  readonly store: SessionStore["Service"]
  readonly audit: AuditLog["Service"]
  readonly configuration: Effect.Effect<Client.Configuration, SignInRefused>
}

/** Reads the roles again with the refresh token; the session's new state, or why it ended. */
const recheckRoles = ({ found, store, audit, configuration }: RecheckDeps, session: Session, now: number) =>
  Effect.gen(function*() {
    const sso = found.sso
    if (Option.isNone(session.refreshToken)) return yield* Effect.fail("no refresh token: sign in again" as const)
    const c = yield* configuration.pipe(Effect.mapError(() => "the identity provider could not be reached" as const))
    const tokens = yield* Effect.tryPromise({
      try: () => Client.refreshTokenGrant(c, Redacted.value(session.refreshToken.pipe(Option.getOrThrow))),
      catch: (e) => unknownKey(e) ? "unknown signing key" as const : "the identity provider refused to refresh the session" as const
    })
    const claims = tokens.claims() as Record<string, unknown> | undefined
    const info = Effect.tryPromise(() => Client.fetchUserInfo(c, tokens.access_token, session.sub)).pipe(
      Effect.map((u) => u as Record<string, unknown>),
      Effect.orElseSucceed(() => undefined)
    )
    const roles = yield* rolesFrom(sso, claims, info)
    const refresh = tokens.refresh_token === undefined ? undefined : Redacted.make(tokens.refresh_token)
    const synced = yield* store.updateRoles(session, roles, refresh, now).pipe(Effect.mapError(() => "the store is unavailable" as const))
    const changed = synced.role !== session.role || JSON.stringify(synced.workspaces) !== JSON.stringify(session.workspaces)
    const next: Session = { ...session, ...synced, rolesCheckedAt: now }
    if (changed) {
      yield* audit.append({
        action: "role.change",
        target: { type: "session", id: session.id },
        workspaceId: null,
        before: { role: session.role, workspaces: session.workspaces },
        after: { role: synced.role, workspaces: synced.workspaces }
      }).pipe(Effect.provideService(CallerService, callerOf(next)), Effect.orElseSucceed(() => undefined))
    }
    return next
  })

/** The authorization code for tokens, every check of `openid-client` made; a refusal saying which failed. */
const exchangeCode = (
  c: Client.Configuration,
  callbackUrl: URL,
  pending: { readonly state: string; readonly nonce: string; readonly verifier: Redacted.Redacted<string> },
  forget: () => void
) =>
  Effect.tryPromise({
    try: () =>
      Client.authorizationCodeGrant(c, callbackUrl, {
        pkceCodeVerifier: Redacted.value(pending.verifier),
        expectedState: pending.state,
        expectedNonce: pending.nonce
      }),
    catch: (e) => {
      if (!unknownKey(e)) return new SignInRefused({ reason: `The identity provider's answer failed its checks: ${(e as Error).message}`, status: 403 })
      // Signed with a key this gateway has not fetched yet (a rotation): fetch the keys again next time.
      forget()
      return new SignInRefused({
        reason: "The identity provider signed with a key this gateway had not fetched yet (its keys were rotated): sign in again",
        status: 403
      })
    }
  })

/** `session.refuse` for a refused call: see {@link SingleSignOn}'s `refusedCall`. */
const refusalRecorder = (audit: AuditLog["Service"]) => {
  const lastUnknown = new Map<string, number>()
  const refusedCall = (
    caller: CallerShape | undefined,
    reason: string,
    request: { readonly method: string; readonly url: string; readonly remoteAddress: Option.Option<string> }
  ): Effect.Effect<void> =>
    Effect.suspend(() => {
      if (caller === undefined) {
        const from = Option.getOrElse(request.remoteAddress, () => "unknown")
        const at = Date.now()
        if ((lastUnknown.get(from) ?? 0) > at - 60_000) return Effect.void
        if (lastUnknown.size > 10_000) lastUnknown.clear()
        lastUnknown.set(from, at)
      }
      const entry = audit.append({
        action: "session.refuse",
        target: { type: "session", id: caller?.person?.sessionId ?? "unknown" },
        workspaceId: null,
        after: { reason, method: request.method, path: request.url.split("?")[0] ?? "" }
      })
      return (caller === undefined ? entry : Effect.provideService(entry, CallerService, caller)).pipe(Effect.ignore)
    })
  return refusedCall
}

export interface SignedIn {
  readonly token: Redacted.Redacted<string>
  readonly session: Session
}

export class SingleSignOn extends Context.Service<SingleSignOn, {
  /** The `sso` section and public URL, when single sign-on is configured. */
  readonly settings: SsoSettings | undefined
  /** Where to send the browser to sign in, and the state its cookie binds. */
  readonly begin: Effect.Effect<{ readonly url: URL; readonly state: string }, SignInRefused | StoreUnavailable>
  /** The callback: checks everything, opens a session. */
  readonly complete: (callbackUrl: URL, stateCookie: string | undefined) => Effect.Effect<SignedIn, SignInRefused | StoreUnavailable>
  /** The caller a session cookie stands for, roles read again when due; 401 when there is none. */
  readonly authenticate: (token: string) => Effect.Effect<CallerShape, Unauthorized | Forbidden | StoreUnavailable>
  /** Ends the session of a cookie (sign-out); where to send the browser then. */
  readonly signOut: (token: string | undefined) => Effect.Effect<string, StoreUnavailable>
  /** Records a refused sign-in. */
  readonly refused: (refusal: SignInRefused) => Effect.Effect<void, StoreUnavailable>
  /**
   * Records a refused call carried by a session cookie (`session.refuse`): by the person when the
   * session was found, else (a cookie no session has) at most once a minute per client address.
   */
  readonly refusedCall: (
    caller: CallerShape | undefined,
    reason: string,
    request: { readonly method: string; readonly url: string; readonly remoteAddress: Option.Option<string> }
  ) => Effect.Effect<void>
}>()("@switchyard/server/http/SingleSignOn") {
  static readonly layer = Layer.effect(
    SingleSignOn,
    Effect.gen(function*() {
      const found = yield* settings
      const store = yield* SessionStore
      const audit = yield* AuditLog
      const given = yield* Effect.serviceOption(SessionClock)
      const currentTime = Option.match(given, { onNone: () => Clock.currentTimeMillis, onSome: (clock) => clock.currentTimeMillis })
      const { configuration, forget } = discoverer(found)
      const redirectUri = () => new URL("/ui/auth/callback", found?.publicUrl).toString()
      const begin = Effect.gen(function*() {
        const c = yield* configuration
        const sso = found!.sso
        const verifier = Client.randomPKCECodeVerifier()
        const state = Client.randomState()
        const nonce = Client.randomNonce()
        const now = yield* currentTime
        yield* store.begin({ state, nonce, verifier: Redacted.make(verifier) }, now, now - Duration.toMillis(signInFor))
        const challenge = yield* Effect.promise(() => Client.calculatePKCECodeChallenge(verifier))
        const url = Client.buildAuthorizationUrl(c, {
          ...sso.authorization_params,
          redirect_uri: redirectUri(),
          scope: sso.scopes.join(" "),
          code_challenge: challenge,
          code_challenge_method: "S256",
          state,
          nonce
        })
        return { url, state }
      })

      const complete = (callbackUrl: URL, stateCookie: string | undefined) =>
        Effect.gen(function*() {
          const c = yield* configuration
          const sso = found!.sso
          const state = callbackUrl.searchParams.get("state") ?? ""
          const now = yield* currentTime
          if (callbackUrl.searchParams.has("error")) {
            return yield* new SignInRefused({ reason: `The identity provider refused the sign-in: ${callbackUrl.searchParams.get("error")}`, status: 403 })
          }
          const pending = yield* store.consume(state, now - Duration.toMillis(signInFor))
          if (Option.isNone(pending) || stateCookie !== state) {
            return yield* new SignInRefused({ reason: "This sign-in is unknown, expired or already used (its state does not match): sign in again", status: 400 })
          }
          const tokens = yield* exchangeCode(c, callbackUrl, { state, ...pending.value }, forget)
          const claims = tokens.claims() as Record<string, unknown> | undefined
          const sub = String(claims?.sub ?? "")
          const email = typeof claims?.email === "string" ? claims.email : null
          const name = typeof claims?.name === "string" ? claims.name : null
          if (!Sso.domainAllowed(sso, email ?? undefined)) {
            return yield* new SignInRefused({ reason: `The email domain of ${email ?? "this account"} is not allowed here`, status: 403, who: { sub, email } })
          }
          const info = Effect.tryPromise(() => Client.fetchUserInfo(c, tokens.access_token, sub)).pipe(
            Effect.map((u) => u as Record<string, unknown>),
            Effect.orElseSucceed(() => undefined)
          )
          const roles = yield* rolesFrom(sso, claims, info)
          if (!Sso.anyRole(roles)) {
            return yield* new SignInRefused({
              reason: `${email ?? sub} is in no group that has a role here: ask an administrator to add you to one`,
              status: 403,
              who: { sub, email }
            })
          }
          const refresh = tokens.refresh_token === undefined ? undefined : Redacted.make(tokens.refresh_token)
          const signedIn = yield* store.create({
            sub, email, name, role: roles.role, workspaces: roles.workspaces, refreshToken: refresh, now,
            expiresAt: now + Duration.toMillis(lastsFor)
          })
          yield* audit.append({
            action: "session.create",
            target: { type: "session", id: signedIn.session.id },
            workspaceId: null,
            after: { sub, email, name, role: roles.role, workspaces: roles.workspaces }
          }).pipe(Effect.provideService(CallerService, callerOf(signedIn.session)))
          return signedIn
        })

      const end = (session: Session, reason: string) =>
        Effect.gen(function*() {
          const ended = yield* store.end({ id: session.id }, yield* currentTime)
          if (ended.length > 0) {
            yield* audit.append({ action: "session.delete", target: { type: "session", id: session.id }, workspaceId: null, after: { reason } })
              .pipe(Effect.provideService(CallerService, callerOf(session)))
          }
        })

      // An ID token signed by a key rotated in since the keys were fetched: fetch them again, once.
      const recheck = (session: Session, now: number) =>
        recheckRoles({ found: found!, store, audit, configuration }, session, now).pipe(
          Effect.catchIf((e) => e === "unknown signing key", () => {
            forget()
            return recheckRoles({ found: found!, store, audit, configuration }, session, now)
          })
        )

      const authenticate = (token: string) =>
        Effect.gen(function*() {
          if (found === undefined) return yield* new Unauthorized({ message: "Single sign-on is not configured: send `Authorization: Bearer <management key>`" })
          const now = yield* currentTime
          const located = yield* store.find(token)
          const gone = new Unauthorized({ message: "Your session has ended: sign in again" })
          if (Option.isNone(located)) return yield* gone
          let session = located.value
          if (session.endedAt !== null) return yield* gone
          if (session.expiresAt <= now || session.lastSeenAt + Duration.toMillis(idleFor) <= now) {
            yield* end(session, "expired")
            return yield* gone
          }
          if (session.rolesCheckedAt + Duration.toMillis(rolesEvery) <= now) {
            const rechecked = yield* Effect.result(recheck(session, now))
            if (rechecked._tag === "Failure") {
              yield* end(session, rechecked.failure)
              return yield* new Unauthorized({ message: `Your session has ended (${rechecked.failure})` })
            }
            session = rechecked.success
            if (!Sso.anyRole(session)) {
              yield* end(session, "no role left")
              return yield* new Forbidden({ message: "You no longer have a role here: your identity provider's groups give none" })
            }
          }
          yield* store.touch(session.id, now)
          return callerOf(session)
        })

      const signOut = (token: string | undefined) =>
        Effect.gen(function*() {
          const back = found === undefined ? "/ui/" : new URL("/ui/", found.publicUrl).toString()
          if (token === undefined || found === undefined) return back
          const located = yield* store.find(token)
          if (Option.isSome(located) && located.value.endedAt === null) yield* end(located.value, "sign-out")
          const c = yield* Effect.result(configuration)
          if (c._tag === "Failure" || c.success.serverMetadata().end_session_endpoint === undefined) return back
          return Client.buildEndSessionUrl(c.success, { client_id: found.sso.client_id, post_logout_redirect_uri: back }).toString()
        })

      const refused = (refusal: SignInRefused) =>
        audit.append({
          action: "session.refuse",
          target: { type: "session", id: refusal.who?.sub ?? "unknown" },
          workspaceId: null,
          after: { reason: refusal.reason, ...(refusal.who === undefined ? {} : { sub: refusal.who.sub ?? null, email: refusal.who.email ?? null }) }
        })

      const refusedCall = refusalRecorder(audit)

      return SingleSignOn.of({ settings: found, begin, complete, authenticate, signOut, refused, refusedCall })
    })
  )
}

