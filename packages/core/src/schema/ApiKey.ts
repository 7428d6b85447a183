/**
 * The API key record and the key listing's query, as the wire carries them.
 *
 * **Details**
 *
 * Field names follow the public API (`limit_remaining`, `byok_usage_daily`...). Money is in
 * credits (USD) as JSON numbers; the store keeps exact integer nano-dollars and converts at the
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
 * What a management key reaches (a Switchyard field): `user`, every workspace its user is a
 * member of (the default, as OpenRouter's account keys do); `workspace`, its own workspace only.
 * A standard key always reaches its own workspace only, and says `workspace`.
 *
 * @since 0.10.0
 */
export const KeyScope = Schema.Literals(["user", "workspace"])

/**
 * @since 0.10.0
 */
export type KeyScope = typeof KeyScope.Type

/**
 * One API key as the listing and the key operations return it.
 *
 * **Details**
 *
 * Beside the public API's fields, Switchyard's `kind` (`standard` or `management`) and `scope`
 * ({@link KeyScope}) say what the key reaches.
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
  workspace_id: Schema.String,
  /** Switchyard: a standard key calls models; a management key manages. */
  kind: Schema.Literals(["standard", "management"]),
  /** Switchyard: what the key reaches ({@link KeyScope}). */
  scope: KeyScope
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

// No upper bound: an offset past the last record is an empty page. Beyond 2^53 every offset is
// past the end, so the value is capped there (an exact integer the store can take).
const NonNegativeIntFromString = Schema.String.check(Schema.isPattern(/^(0|[1-9][0-9]*)$/u, {
  message: "must be a non-negative integer"
})).pipe(
  Schema.decodeTo(Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)), {
    decode: SchemaGetter.transform((s) => Math.min(Number(s), Number.MAX_SAFE_INTEGER)),
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

const isoInstant = Schema.makeFilter<string>(
  (s) =>
    (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/u.test(s) && !Number.isNaN(Date.parse(s))) ||
    "must be an ISO 8601 date-time with a time zone, such as 2030-01-31T23:59:59Z",
  { expected: "an ISO 8601 date-time with a time zone" }
)

/**
 * An ISO 8601 date-time with a time zone (`2030-01-31T23:59:59Z`).
 *
 * @since 0.1.0
 */
const IsoDateTime = Schema.String.check(isoInstant)

/**
 * A spending limit in credits (USD): a finite number from 0 to 1,000,000,000.
 *
 * @since 0.1.0
 */
const Credits = Schema.Finite.check(
  Schema.isGreaterThanOrEqualTo(0, { message: "must be at least 0" }),
  Schema.isLessThanOrEqualTo(1_000_000_000, { message: "must be at most 1000000000" })
)

/**
 * A key's name: 1 to 200 characters.
 *
 * @since 0.1.0
 */
const KeyName = Schema.String.check(
  Schema.isBetweenCodePoints(1, 200, { message: "name must be 1 to 200 characters" })
)

/**
 * `POST /keys`: a new standard key. Field names as the official SDK sends them.
 *
 * **Details**
 *
 * `creator_user_id` names the user the key belongs to: the calling user, or (for an admin of the
 * workspace) another member of it. `kind: "management"` (a Switchyard field) makes a management
 * key, for an admin of the workspace only; its `scope` (a Switchyard field, {@link KeyScope}) is
 * `user` unless `workspace` is asked for, and a key of `workspace` scope mints only keys of that
 * scope. `external.user` is stored as the record's `external_user`.
 *
 * @since 0.1.0
 */
export const CreateKeyBody = Schema.Struct({
  name: KeyName,
  limit: Schema.optionalKey(Schema.NullOr(Credits)),
  limit_reset: Schema.optionalKey(Schema.NullOr(LimitReset)),
  include_byok_in_limit: Schema.optionalKey(Schema.Boolean),
  expires_at: Schema.optionalKey(Schema.NullOr(IsoDateTime)),
  creator_user_id: Schema.optionalKey(Schema.NullOr(Schema.String)),
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  /** Switchyard: `management` makes a management key (an admin of the workspace only). */
  kind: Schema.optionalKey(Schema.Literals(["standard", "management"])),
  /** Switchyard: what a management key reaches; `user` by default. */
  scope: Schema.optionalKey(KeyScope),
  external: Schema.optionalKey(Schema.Struct({
    user: Schema.String.check(Schema.isBetweenCodePoints(1, 256)),
    api_key: Schema.optionalKey(Schema.String)
  }))
})

/**
 * @since 0.1.0
 */
export type CreateKeyBody = typeof CreateKeyBody.Type

/**
 * `PATCH /keys/{hash}`: omitted fields stay; `null` clears `limit`, `limit_reset` and
 * `expires_at`.
 *
 * @since 0.1.0
 */
export const UpdateKeyBody = Schema.Struct({
  name: Schema.optionalKey(KeyName),
  disabled: Schema.optionalKey(Schema.Boolean),
  limit: Schema.optionalKey(Schema.NullOr(Credits)),
  limit_reset: Schema.optionalKey(Schema.NullOr(LimitReset)),
  include_byok_in_limit: Schema.optionalKey(Schema.Boolean),
  expires_at: Schema.optionalKey(Schema.NullOr(IsoDateTime))
})

/**
 * @since 0.1.0
 */
export type UpdateKeyBody = typeof UpdateKeyBody.Type

/**
 * The path of the single-key operations.
 *
 * @since 0.1.0
 */
export const KeyHashParams = { hash: Schema.String }

/**
 * `GET`/`PATCH /keys/{hash}`: one record.
 *
 * @since 0.1.0
 */
export const ApiKeyResponse = Schema.Struct({ data: ApiKeyRecord })

/**
 * `POST /keys`: the record and the secret, which is shown only this once.
 *
 * @since 0.1.0
 */
export const CreatedApiKey = Schema.Struct({ data: ApiKeyRecord, key: Schema.String })

/**
 * `DELETE /keys/{hash}`.
 *
 * @since 0.1.0
 */
export const ApiKeyDeleted = Schema.Struct({ deleted: Schema.Literal(true) })

/**
 * The request rate a key is allowed, as `GET /key` reports it (`interval` such as `"60s"`).
 *
 * @since 0.1.0
 */
const RateLimitInfo = Schema.Struct({
  requests: Schema.Int,
  interval: Schema.String,
  note: Schema.String
})

/**
 * `GET /key`: the calling key's own record, with the fields the official SDK's
 * `getCurrentKeyMetadata` requires.
 *
 * **Details**
 *
 * Switchyard has no free tier, no organizations and no data regions: `is_free_tier` is `false`,
 * `organization_id` is `null`, `allowed_data_regions` is empty. It does not cap free-model
 * requests per day, so `free_model_daily_requests` reports today's zero-cost requests in `used`
 * and `-1` (no cap) in `limit` and `remaining`.
 *
 * @since 0.1.0
 */
export const CurrentKeyRecord = Schema.Struct({
  ...ApiKeyRecord.fields,
  allowed_data_regions: Schema.Array(Schema.String),
  free_model_daily_requests: Schema.Struct({ limit: Schema.Int, remaining: Schema.Int, used: Schema.Int }),
  is_free_tier: Schema.Boolean,
  is_management_key: Schema.Boolean,
  is_provisioning_key: Schema.Boolean,
  organization_id: Schema.NullOr(Schema.String),
  rate_limit: RateLimitInfo
})

/**
 * @since 0.1.0
 */
export type CurrentKeyRecord = typeof CurrentKeyRecord.Type

/**
 * @since 0.1.0
 */
export const CurrentKeyResponse = Schema.Struct({ data: CurrentKeyRecord })
