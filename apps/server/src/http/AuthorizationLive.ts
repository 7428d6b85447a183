import { Authorization, Caller, type CallerShape } from "@switchyard/core/api/Authorization"
import { Forbidden, Unauthorized } from "@switchyard/core/schema/ApiError"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import { HttpServerRequest } from "effect/http"
import * as Crypto from "node:crypto"
import * as Access from "../auth/Access.ts"
import * as KeySecret from "../auth/KeySecret.ts"
import * as RequestFacts from "../instrumentation/RequestFacts.ts"
import { ownerOf } from "./MemoryBudget.ts"
import { KeyRateLimit } from "./RateLimit.ts"
import { RequestBodies } from "./RequestBody.ts"
import { cookieName, SingleSignOn } from "./SingleSignOn.ts"
import * as StoreFailure from "./StoreFailure.ts"

const refuse = (message: string) => Effect.fail(new Unauthorized({ message }))

/**
 * Bearer-key authentication: the key's SHA-256 selects its record; a missing, malformed, unknown,
 * disabled or expired key is a 401 that never says which of these it was beyond "missing". A valid key
 * then counts one request against its rate limit (429 when spent).
 *
 * This is the one place a request's credential is checked, and it is checked before anything reads
 * the request's body: an unauthenticated request is a 401 whatever it sends. Only then is the body
 * admitted (RequestBody.ts), charged to the caller's workspace and key.
 */
export const layer = Layer.effect(
  Authorization,
  Effect.gen(function*() {
    const keys = yield* ApiKeyStore
    const rateLimit = yield* KeyRateLimit
    const bodies = yield* RequestBodies
    const sso = yield* SingleSignOn
    const forbid = (message: string) => Effect.fail(new Forbidden({ message }))
    const same = (a: string, b: string) =>
      a.length === b.length && Crypto.timingSafeEqual(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))
    /**
     * A person's session cookie: the session (roles read again when due), then, for a change, the
     * CSRF token and the Origin, then what their role allows (Access.ts). All before the body.
     */
    const session = (request: HttpServerRequest.HttpServerRequest, token: string) =>
      sso.authenticate(token).pipe(
        StoreFailure.answer,
        Effect.tapError((e) => e._tag === "Unauthorized" || e._tag === "Forbidden" ? sso.refusedCall(undefined, e.message, request) : Effect.void),
        Effect.flatMap((caller) =>
          allowed(request, caller).pipe(
            Effect.tapError((e) => e._tag === "Forbidden" ? sso.refusedCall(caller, e.message, request) : Effect.void)
          )
        )
      )
    const allowed = Effect.fnUntraced(function*(request: HttpServerRequest.HttpServerRequest, caller: CallerShape) {
      const person = caller.person!
      yield* RequestFacts.note({ sso_session: person.sessionId.slice(0, 8) })
      if (Access.changes(request.method)) {
        const given = request.headers["x-csrf-token"] ?? ""
        if (!same(given, person.csrfToken)) {
          return yield* forbid("A change carried by the session cookie needs the header x-csrf-token (from GET /api/v1/me)")
        }
        const origin = request.headers.origin
        if (origin !== undefined && origin !== sso.settings?.publicUrl.origin) {
          return yield* forbid("Cross-site request refused: the Origin is not this gateway's public URL")
        }
      }
      const url = request.url
      const path = url.slice("/api/v1".length).split("?")[0] ?? ""
      const refusal = Access.refusal(person, request.method, path)
      if (refusal !== undefined) return yield* forbid(refusal)
      yield* rateLimit.check(caller.keyHash).pipe(Effect.tapError(() => RequestFacts.note({ rate_limited: true })))
      return caller
    })
    const authenticate = Effect.fnUntraced(function*(credential: Redacted.Redacted<string>) {
      const secret = Redacted.value(credential)
      if (secret.length === 0) {
        return yield* refuse("Missing Authorization header: send `Authorization: Bearer <API key>`")
      }
      if (!KeySecret.isWellFormed(secret)) return yield* refuse("Invalid API key")
      const hash = KeySecret.hash(secret)
      const found = yield* keys.findByHash(hash).pipe(StoreFailure.answer)
      if (Option.isNone(found) || !KeySecret.sameHash(found.value.hash, hash)) {
        return yield* refuse("Invalid API key")
      }
      const key = found.value
      yield* RequestFacts.note({ key: key.hash.slice(0, 12), workspace: key.workspaceId })
      if (key.disabled) return yield* refuse("This API key is disabled")
      const now = yield* Clock.currentTimeMillis
      if (key.expiresAt !== null && key.expiresAt.getTime() <= now) return yield* refuse("This API key has expired")
      yield* rateLimit.check(key.hash).pipe(Effect.tapError(() => RequestFacts.note({ rate_limited: true })))
      const caller: CallerShape = {
        keyId: key.id,
        keyHash: key.hash,
        kind: key.kind,
        userId: key.userId,
        workspaceId: key.workspaceId,
        scope: key.scope
      }
      return caller
    })
    return Authorization.of({
      bearer: (httpEffect, { credential }) =>
        Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
          const cookie = request.cookies[cookieName]
          // A key wins; without one, the session cookie.
          const bySession = Redacted.value(credential).length === 0 && cookie !== undefined && cookie.length > 0
          return Effect.flatMap(bySession ? session(request, cookie) : authenticate(credential), (caller) => {
            const handled = Effect.provideService(httpEffect, Caller, caller)
            // A handler's 403 to a person (a workspace they have no role in) is audited as the edge's are.
            const audited = caller.person === undefined ? handled : Effect.tapError(handled, (e) => {
              const error = (e as { readonly error?: unknown }).error ?? e
              return (error as { readonly _tag?: unknown })._tag === "Forbidden"
                ? sso.refusedCall(caller, (error as Forbidden).message, request)
                : Effect.void
            })
            return bodies.admitted(ownerOf(caller), audited)
          })
        })
    })
  })
)
