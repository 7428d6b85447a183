/**
 * The audit log on the wire: one entry per management action (`GET /audit-log`) and the check of
 * its hash chain (`GET /audit-log/verify`).
 *
 * **Details**
 *
 * Actions are `<resource>.<verb>` (`key.create`, `workspace.update`, `budget.set`,
 * `credits.add`, `provider.create`...). `before` and `after` are the fields the action changed,
 * secrets redacted. `id` grows with every entry; `next_cursor` pages to older entries.
 *
 * @see {@link ../audit/AuditChain.ts} for the chain the entries form.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { IntFromString } from "./Byok.ts"

/**
 * One entry of the audit log.
 *
 * @since 0.1.0
 */
export const AuditEntry = Schema.Struct({
  id: Schema.Int,
  at: Schema.String,
  actor: Schema.Struct({
    key_hash: Schema.NullOr(Schema.String),
    key_name: Schema.NullOr(Schema.String),
    user_id: Schema.NullOr(Schema.String),
    /** The person, for an entry made through a single sign-on session. */
    user: Schema.optionalKey(Schema.Struct({ sub: Schema.String, email: Schema.NullOr(Schema.String), name: Schema.NullOr(Schema.String) })),
    session_id: Schema.optionalKey(Schema.String)
  }),
  workspace_id: Schema.NullOr(Schema.String),
  action: Schema.String,
  target: Schema.Struct({ type: Schema.String, id: Schema.String }),
  before: Schema.NullOr(Schema.Unknown),
  after: Schema.NullOr(Schema.Unknown),
  ip: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String),
  prev_hash: Schema.String,
  hash: Schema.String,
  /**
   * What the gateway's last check of the chain found of this entry: `true` whole, `false` at or
   * after the first broken entry, `null` added since the last check.
   */
  verified: Schema.optionalKey(Schema.NullOr(Schema.Boolean))
})

/**
 * @since 0.1.0
 */
export type AuditEntry = typeof AuditEntry.Type

/**
 * `GET /audit-log`: newest first; `next_cursor` is `null` on the last page.
 *
 * @since 0.1.0
 */
export const AuditList = Schema.Struct({
  data: Schema.Array(AuditEntry),
  next_cursor: Schema.NullOr(Schema.String)
})

/**
 * @since 0.1.0
 */
export type AuditList = typeof AuditList.Type

const Instant = (field: string) =>
  Schema.String.check(Schema.makeFilter((s) =>
    /^\d{4}-\d{2}-\d{2}/u.test(s) && !Number.isNaN(Date.parse(s))
      ? undefined
      : `${field} must be an ISO 8601 date or time, such as 2026-01-31 or 2026-01-31T12:00:00Z`
  ))

/**
 * The filters of `GET /audit-log`: `workspace_id`, `action` (exact, or a resource such as `key.*`), `target_type`,
 * `target_id`, `actor` (a key hash or a user id), `since` and `until` (ISO 8601, `until`
 * exclusive), `limit` (1 to 500, default 100) and `cursor` (a previous page's `next_cursor`).
 *
 * @since 0.1.0
 */
export const AuditQuery = {
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 100))),
  action: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 100))),
  target_type: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 100))),
  target_id: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 200))),
  actor: Schema.optionalKey(Schema.String.check(Schema.isBetweenLength(1, 200))),
  since: Schema.optionalKey(Instant("since")),
  until: Schema.optionalKey(Instant("until")),
  limit: Schema.optionalKey(IntFromString(1, 500, "limit")),
  cursor: Schema.optionalKey(IntFromString(1, 999_999_999, "cursor"))
}

/**
 * `GET /audit-log/verify`: whether every link of the chain holds, how many entries were checked,
 * and the first entry whose link is broken.
 *
 * @since 0.1.0
 */
export const AuditVerification = Schema.Struct({
  ok: Schema.Boolean,
  checked: Schema.Int,
  first_broken: Schema.optionalKey(Schema.Struct({
    id: Schema.Int,
    reason: Schema.Literals(["hash_mismatch", "prev_hash_mismatch"])
  }))
})

/**
 * @since 0.1.0
 */
export type AuditVerification = typeof AuditVerification.Type
