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
  /**
   * The person, when the request came with a single sign-on session cookie instead of a key:
   * their roles (from their identity provider's groups) decide what they may do.
   */
  readonly person?: PersonShape
}

/**
 * A person signed in by single sign-on, as a caller: who they are, their session and their roles.
 *
 * @since 0.1.0
 */
export interface PersonShape {
  readonly sub: string
  readonly email: string | null
  readonly name: string | null
  readonly sessionId: string
  readonly csrfToken: string
  readonly role: "admin" | "viewer" | null
  readonly workspaces: ReadonlyArray<{ readonly id: string; readonly role: "admin" | "member" }>
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
 * Without a key, the server takes a single sign-on session cookie (`switchyard_session`) instead;
 * a person whose role is not enough, or a cookie-carried change without its CSRF token, is a 403.
 *
 * @since 0.1.0
 */
export class Authorization extends HttpApiMiddleware.Service<Authorization, { provides: Caller }>()(
  "@switchyard/core/api/Authorization",
  {
    requiredForClient: true,
    security: { bearer: HttpApiSecurity.bearer },
    error: [wire[401], wire[403], wire[429], wire[503]]
  }
) {}

