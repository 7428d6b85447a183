/**
 * Bearer-key authentication, shared by the server (which implements it) and the client (which
 * supplies the key).
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import { HttpApiMiddleware, HttpApiSecurity } from "effect/http-api"
import { Unauthorized, wire } from "../schema/ApiError.ts"
import type { KeyScope } from "../schema/ApiKey.ts"

/**
 * Who is calling: the key that authenticated the request and what it selects.
 *
 * @since 0.1.0
 */
export interface CallerShape {
  readonly keyId: string
  readonly keyHash: string
  readonly kind: "standard" | "management"
  readonly userId: string
  readonly workspaceId: string
  /**
   * What a management key reaches: `workspace` only its own workspace; `user` (or absent) every
   * workspace its user is a member of. A standard key reaches its own workspace whatever this says.
   */
  readonly scope?: KeyScope
}

/**
 * The authenticated caller, provided to every handler behind {@link Authorization}.
 *
 * @since 0.1.0
 */
export class Caller extends Context.Service<Caller, CallerShape>()("@switchyard/core/api/Caller") {}

/**
 * The bearer-key middleware. A missing, malformed, unknown, disabled or expired key fails with
 * {@link Unauthorized} (401); a key over its request rate limit with `TooManyRequests` (429).
 *
 * @since 0.1.0
 */
export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: Caller }>()(
  "@switchyard/core/api/Authorization",
  {
    requiredForClient: true,
    security: { bearer: HttpApiSecurity.bearer },
    error: [wire[401], wire[429], wire[503]]
  }
) {}

