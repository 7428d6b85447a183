import { Authorization, Caller, type CallerShape } from "@switchyard/core/api/Authorization"
import { Unauthorized } from "@switchyard/core/schema/ApiError"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Clock, Effect, Layer, Option, Redacted } from "effect"
import * as KeySecret from "../auth/KeySecret.ts"
import * as RequestFacts from "../instrumentation/RequestFacts.ts"
import { ownerOf } from "./MemoryBudget.ts"
import { KeyRateLimit } from "./RateLimit.ts"
import { RequestBodies } from "./RequestBody.ts"
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
        Effect.flatMap(authenticate(credential), (caller) =>
          bodies.admitted(ownerOf(caller), Effect.provideService(httpEffect, Caller, caller)))
    })
  })
)
