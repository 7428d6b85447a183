/**
 * The API key record and the key listing's query, as the wire carries them.
 *
 * **Details**
 *
 * Field names follow the public API (`limit_remaining`, `byok_usage_daily`...). Money is in
 * credits (USD) as JSON numbers; the store keeps exact integer micro-dollars and converts at the
 * edge. `limit`, `limit_remaining`, `limit_reset`, `expires_at`, `creator_user_id`,
 * `external_user` and `updated_at` are `null` when unset, as the official SDK expects.
 *
 * @since 0.1.0
 */
import { Schema, SchemaGetter } from "effect"

/**
 * How often a key's spending limit starts again, at midnight UTC. `null` means never.
 *
 * @since 0.1.0
 */
export const LimitReset = Schema.Literals(["daily", "weekly", "monthly"])

/**
 * @since 0.1.0
 */
export type LimitReset = typeof LimitReset.Type

/**
 * A key's identifier on the wire: the hex SHA-256 of its secret, never the secret.
 *
 * @since 0.1.0
 */
export const KeyHash = Schema.String.check(Schema.isPattern(/^[0-9a-f]{64}$/u))

/**
 * One API key as the listing and the key operations return it.
 *
 * @since 0.1.0
 */
export const ApiKeyRecord = Schema.Struct({
  hash: Schema.String,
  name: Schema.String,
  label: Schema.String,
  disabled: Schema.Boolean,
  limit: Schema.NullOr(Schema.Finite),
  limit_remaining: Schema.NullOr(Schema.Finite),
  limit_reset: Schema.NullOr(LimitReset),
  include_byok_in_limit: Schema.Boolean,
  usage: Schema.Finite,
  usage_daily: Schema.Finite,
  usage_weekly: Schema.Finite,
  usage_monthly: Schema.Finite,
  byok_usage: Schema.Finite,
  byok_usage_daily: Schema.Finite,
  byok_usage_weekly: Schema.Finite,
  byok_usage_monthly: Schema.Finite,
  created_at: Schema.String,
  updated_at: Schema.NullOr(Schema.String),
  expires_at: Schema.NullOr(Schema.String),
  creator_user_id: Schema.NullOr(Schema.String),
  external_user: Schema.NullOr(Schema.String),
  workspace_id: Schema.String
})

/**
 * @since 0.1.0
 */
export type ApiKeyRecord = typeof ApiKeyRecord.Type

/**
 * The key listing's body.
 *
 * @since 0.1.0
 */
export const ApiKeyList = Schema.Struct({ data: Schema.Array(ApiKeyRecord) })

const BooleanFromString = Schema.Literals(["true", "false"]).pipe(
  Schema.decodeTo(Schema.Boolean, {
    decode: SchemaGetter.transform((s) => s === "true"),
    encode: SchemaGetter.transform((b) => (b ? "true" : "false"))
  })
)

const NonNegativeIntFromString = Schema.String.check(Schema.isPattern(/^(0|[1-9][0-9]{0,8})$/u)).pipe(
  Schema.decodeTo(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)), {
    decode: SchemaGetter.transform((s) => Number(s)),
    encode: SchemaGetter.transform((n) => String(n))
  })
)

/**
 * The key listing's query: `include_disabled`, `offset` and `workspace_id`, as the official SDK
 * names them.
 *
 * @since 0.1.0
 */
export const ListKeysQuery = {
  include_disabled: Schema.optionalKey(BooleanFromString),
  offset: Schema.optionalKey(NonNegativeIntFromString),
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1)))
}

/**
 * How many records one page of the key listing holds at the most.
 *
 * @since 0.1.0
 */
export const pageSize = 100
