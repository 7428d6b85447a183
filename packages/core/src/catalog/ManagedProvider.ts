/**
 * Providers managed at runtime by instance administrators (`POST /providers`,
 * `GET|PATCH|DELETE /providers/{slug}`, `POST /providers/{slug}/test`): the body is one provider as
 * in the config file, checked by the config file's own schema, with a write-only `api_key`.
 *
 * **Details**
 *
 * A provider answer carries `source` (`config` for the built-in catalog and the config file, `api`
 * for providers created through the API), `enabled`, and `api_key` as `{ set, last4 }`: never the
 * secret. `PATCH` replaces the top-level fields it names and checks the result as a whole; `api_key:
 * null` removes the stored credential.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import * as Catalog from "./Catalog.ts"
import * as DecodeIssue from "../schema/DecodeIssue.ts"

const Secret = Schema.String.check(Schema.isBetweenLength(1, 4096))

/**
 * `POST /providers`: a provider as in the config file (checked by `Catalog.Provider` when the
 * server receives it, so every rule and message is the config file's), plus `api_key`.
 *
 * @since 0.1.0
 */
export const CreateProviderBody = Schema.Record(Schema.String, Schema.Unknown)

/**
 * `PATCH /providers/{slug}`: the top-level fields to replace (not `slug`), `api_key` (a string to
 * set, `null` to remove) and `enabled`.
 *
 * @since 0.1.0
 */
export const UpdateProviderBody = Schema.Record(Schema.String, Schema.Unknown)

/**
 * @since 0.1.0
 */
export const ProviderSlugParams = { slug: Schema.String.check(Schema.isBetweenLength(1, 100)) }

/**
 * What an answer shows of a provider's credential.
 *
 * @since 0.1.0
 */
const CredentialShown = Schema.Struct({ set: Schema.Boolean, last4: Schema.NullOr(Schema.String) })

/**
 * One provider as an administrator sees it.
 *
 * @since 0.1.0
 */
export const ManagedProvider = Schema.Struct({
  slug: Schema.String,
  name: Schema.String,
  source: Schema.Literals(["config", "api"]),
  enabled: Schema.Boolean,
  active: Schema.Boolean,
  api_key: CredentialShown,
  provider: Schema.Record(Schema.String, Schema.Unknown),
  updated_at: Schema.NullOr(Schema.String),
  /**
   * A self-hosted server's replicas (`base_urls`, or its one `base_url`) as this process sees them:
   * health (probes and the outage window after a failure), requests in flight, p50 latency.
   */
  replicas: Schema.optionalKey(Schema.Array(Schema.Struct({
    base_url: Schema.String,
    healthy: Schema.Boolean,
    in_flight: Schema.Int,
    p50_ms: Schema.NullOr(Schema.Finite)
  })))
})

/**
 * @since 0.1.0
 */
export type ManagedProvider = typeof ManagedProvider.Type

/**
 * @since 0.1.0
 */
export const ManagedProviderResponse = Schema.Struct({ data: ManagedProvider })

/**
 * @since 0.1.0
 */
export const ProviderDeleted = Schema.Struct({ deleted: Schema.Literal(true) })

/**
 * `POST /providers/{slug}/test`: one small call to each endpoint, its status and latency.
 *
 * @since 0.1.0
 */
export const ProviderTestResult = Schema.Struct({
  data: Schema.Struct({
    slug: Schema.String,
    ok: Schema.Boolean,
    endpoints: Schema.Array(Schema.Struct({
      model: Schema.String,
      task: Schema.String,
      ok: Schema.Boolean,
      status: Schema.NullOr(Schema.Int),
      latency_ms: Schema.Finite,
      error: Schema.NullOr(Schema.String)
    }))
  })
})

/**
 * @since 0.1.0
 */
export type ProviderTestResult = typeof ProviderTestResult.Type

/**
 * A provider and its credential as a body gave them: the provider checked by the config file's
 * schema, the secret (absent: unchanged or none; `null`: removed) apart.
 *
 * @since 0.1.0
 */
export interface ProviderInput {
  readonly provider: Catalog.Provider
  readonly apiKey: string | null | undefined
}

/**
 * Checks a body against the config file's provider schema, `api_key` taken out first.
 *
 * @since 0.1.0
 */
export const decodeInput = (body: Readonly<Record<string, unknown>>): Effect.Effect<ProviderInput, Catalog.CatalogError> =>
  Effect.gen(function*() {
    const { api_key, ...rest } = body
    if (api_key !== undefined && api_key !== null && !Schema.is(Secret)(api_key)) {
      return yield* new Catalog.CatalogError({
        message: "Invalid provider: api_key must be a string of 1 to 4096 characters, or null",
        issues: [{ path: "api_key", message: "must be a string of 1 to 4096 characters, or null" }]
      })
    }
    const provider = yield* Schema.decodeUnknownEffect(Catalog.Provider)(rest, { errors: "all", onExcessProperty: "error" }).pipe(
      Effect.mapError((error) => {
        const issues = DecodeIssue.fromSchemaError(error)
        return new Catalog.CatalogError({ message: `Invalid provider: ${DecodeIssue.summarize(issues)}`, issues })
      })
    )
    return { provider, apiKey: api_key as string | null | undefined }
  })

/**
 * A provider in its config-file form (what is stored, and shown as `provider`).
 *
 * @since 0.1.0
 */
export const encode = (provider: Catalog.Provider): Record<string, unknown> =>
  Schema.encodeSync(Catalog.Provider)(provider)

/**
 * The body a `PATCH` makes of a stored provider: its fields replaced by those the patch names.
 * `slug` cannot change.
 *
 * @since 0.1.0
 */
export const patched = (stored: Catalog.Provider, patch: Readonly<Record<string, unknown>>): Record<string, unknown> => ({
  ...encode(stored),
  ...patch,
  slug: stored.slug
})

/**
 * The last four characters of a secret long enough to keep others hidden, else none.
 *
 * @since 0.1.0
 */
export const last4 = (secret: string): string | null => (secret.length >= 12 ? secret.slice(-4) : null)
