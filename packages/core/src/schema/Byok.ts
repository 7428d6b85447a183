/**
 * Bring-your-own-key provider credentials on the wire, in the official SDK's `byok` shapes.
 *
 * **Details**
 *
 * A workspace may store its own credential for a provider; requests served with it are
 * `is_byok: true`. The secret is accepted on create and update and never returned: the record
 * shows a `label` (`sk-...x1y2`) instead.
 *
 * Switchyard implements the credential, its name and `disabled`. The SDK's per-credential
 * restrictions (`allowed_api_key_hashes`, `allowed_models`, `allowed_user_ids`,
 * `declared_zdr`, `is_byok_only`, `is_fallback`, `is_required`) are reported as `null`/`false`;
 * a request that sets one of them to anything else is refused with 400 rather than stored and
 * ignored.
 *
 * @since 0.1.0
 */
import { Schema, SchemaGetter } from "effect"

/**
 * A provider slug (`openai`, `voyageai`, `amazon-bedrock/claude-on-aws`).
 *
 * @since 0.1.0
 */
const ProviderSlug = Schema.String.check(
  Schema.isPattern(/^[a-z0-9][a-z0-9._-]*(\/[a-z0-9][a-z0-9._-]*)?$/u, {
    message: "provider must be a provider slug such as \"openai\""
  }),
  Schema.isMaxLength(100)
)

/**
 * One stored credential, without its secret.
 *
 * @since 0.1.0
 */
export const ByokKey = Schema.Struct({
  id: Schema.String,
  provider: Schema.String,
  name: Schema.NullOr(Schema.String),
  label: Schema.String,
  disabled: Schema.Boolean,
  sort_order: Schema.Int,
  workspace_id: Schema.NullOr(Schema.String),
  created_at: Schema.String,
  allowed_api_key_hashes: Schema.NullOr(Schema.Array(Schema.String)),
  allowed_models: Schema.NullOr(Schema.Array(Schema.String)),
  allowed_user_ids: Schema.NullOr(Schema.Array(Schema.String)),
  declared_zdr: Schema.NullOr(Schema.Boolean),
  is_byok_only: Schema.Boolean,
  is_fallback: Schema.Boolean,
  is_required: Schema.Boolean,
  /**
   * Switchyard, in the answer of a create or an update: `true` when this credential makes the
   * routing use a provider of the catalog that the gateway holds no credential for, so the
   * workspace's next requests may be sent to it (the gateway logs it too); `false` when it changes
   * which provider is used for nothing but who pays.
   *
   * @since 0.3.0
   */
  activates_provider: Schema.optionalKey(Schema.Boolean)
})

/**
 * @since 0.1.0
 */
export type ByokKey = typeof ByokKey.Type

const unsupported = {
  allowed_api_key_hashes: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  allowed_models: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  allowed_user_ids: Schema.optionalKey(Schema.NullOr(Schema.Array(Schema.String))),
  declared_zdr: Schema.optionalKey(Schema.NullOr(Schema.Boolean)),
  is_byok_only: Schema.optionalKey(Schema.Boolean),
  is_fallback: Schema.optionalKey(Schema.Boolean),
  is_required: Schema.optionalKey(Schema.Boolean)
}

/**
 * The SDK fields Switchyard does not implement; each must be absent, `null` or `false`.
 *
 * @since 0.1.0
 */
export const unsupportedFields = Object.keys(unsupported) as ReadonlyArray<keyof typeof unsupported>

const Secret = Schema.String.check(
  Schema.isBetweenCodePoints(1, 8192, { message: "key must be 1 to 8192 characters" })
)

const Name = Schema.NullOr(Schema.String.check(Schema.isMaxCodePoints(200, { message: "name must be at most 200 characters" })))

/**
 * `POST /byok`.
 *
 * @since 0.1.0
 */
export const CreateByokBody = Schema.Struct({
  provider: ProviderSlug,
  key: Secret,
  name: Schema.optionalKey(Name),
  disabled: Schema.optionalKey(Schema.Boolean),
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  ...unsupported
})

/**
 * @since 0.1.0
 */
export type CreateByokBody = typeof CreateByokBody.Type

/**
 * `PATCH /byok/{id}`: omitted fields stay; a new `key` replaces the secret.
 *
 * @since 0.1.0
 */
export const UpdateByokBody = Schema.Struct({
  key: Schema.optionalKey(Secret),
  name: Schema.optionalKey(Name),
  disabled: Schema.optionalKey(Schema.Boolean),
  ...unsupported
})

/**
 * @since 0.1.0
 */
export type UpdateByokBody = typeof UpdateByokBody.Type

/**
 * @since 0.1.0
 */
export const ByokIdParams = { id: Schema.String }

/**
 * @since 0.1.0
 */
export const ByokResponse = Schema.Struct({ data: ByokKey })

/**
 * `GET /byok`: one page and the total.
 *
 * @since 0.1.0
 */
export const ByokList = Schema.Struct({ data: Schema.Array(ByokKey), total_count: Schema.Int })

/**
 * @since 0.1.0
 */
export const ByokDeleted = Schema.Struct({ deleted: Schema.Literal(true) })

/**
 * A whole number from a query string, between `min` and `max`, named `field` in messages.
 *
 * @since 0.1.0
 */
export const IntFromString = (min: number, max: number, field: string) =>
  Schema.String.check(Schema.isPattern(/^(0|[1-9][0-9]{0,8})$/u, { message: `${field} must be a whole number` })).pipe(
    Schema.decodeTo(
      Schema.Int.check(Schema.isBetween({ minimum: min, maximum: max }, { message: `${field} must be ${min} to ${max}` })),
      {
        decode: SchemaGetter.transform((s) => Number(s)),
        encode: SchemaGetter.transform((n) => String(n))
      }
    )
  )

/**
 * The query of `GET /byok`: `offset` (default 0), `limit` (1 to 100, default 50),
 * `workspace_id` and `provider` filters.
 *
 * @since 0.1.0
 */
export const ListByokQuery = {
  offset: Schema.optionalKey(IntFromString(0, 1_000_000_000, "offset")),
  limit: Schema.optionalKey(IntFromString(1, 100, "limit")),
  workspace_id: Schema.optionalKey(Schema.String.check(Schema.isMinLength(1))),
  provider: Schema.optionalKey(ProviderSlug)
}
