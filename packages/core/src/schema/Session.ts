/**
 * People signed in by single sign-on on the wire: who is calling (`GET /me`) and the sessions an
 * instance administrator lists and ends (`/sessions`).
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * A person, as the identity provider names them; `id` is the gateway's user id.
 *
 * @since 0.1.0
 */
const Person = Schema.Struct({
  id: Schema.String,
  sub: Schema.String,
  email: Schema.NullOr(Schema.String),
  name: Schema.NullOr(Schema.String)
})

/**
 * `GET /me`: who is calling and what they may do. `csrf_token` is for sessions only: send it as
 * `x-csrf-token` with every state-changing request. `sign_in` says which sign-in the console
 * offers (`sso`, `key` or both), as the public `GET /ui/auth/options` does before anyone signs in.
 *
 * @since 0.1.0
 */
export const Me = Schema.Struct({
  user: Schema.NullOr(Person),
  role: Schema.NullOr(Schema.Literals(["admin", "viewer"])),
  workspaces: Schema.Array(Schema.Struct({ id: Schema.String, role: Schema.Literals(["admin", "member"]) })),
  via: Schema.NullOr(Schema.Literals(["session", "management_key", "api_key"])),
  csrf_token: Schema.optionalKey(Schema.String),
  sign_in: Schema.Struct({ sso: Schema.Boolean, key: Schema.Boolean })
})

/**
 * @since 0.1.0
 */
export type Me = typeof Me.Type

/**
 * One session.
 *
 * @since 0.1.0
 */
const SessionEntry = Schema.Struct({
  id: Schema.String,
  user: Person,
  created_at: Schema.String,
  last_seen_at: Schema.String,
  expires_at: Schema.String
})

/**
 * `GET /sessions`.
 *
 * @since 0.1.0
 */
export const SessionList = Schema.Struct({ data: Schema.Array(SessionEntry) })

/**
 * `GET /sessions` and `DELETE /sessions`: `user_id` selects one person's.
 *
 * @since 0.1.0
 */
export const SessionQuery = Schema.Struct({ user_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))) })

/**
 * `DELETE /sessions/{id}` and `DELETE /sessions?user_id=`: how many sessions ended.
 *
 * @since 0.1.0
 */
export const SessionsEnded = Schema.Struct({ deleted: Schema.Int })
