import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as ManagedProvider from "@switchyard/core/catalog/ManagedProvider"
import { fromSqlError, type StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { CredentialCipher } from "./CredentialCipher.ts"

/**
 * A provider created through the API, as stored: the provider (its `enabled` the stored switch),
 * its credential opened (none when unset, or sealed with another secret key) and what answers show
 * of it.
 */
export interface StoredProvider {
  readonly provider: Catalog.Provider
  readonly credential: Option.Option<Redacted.Redacted<string>>
  readonly credentialSet: boolean
  readonly last4: string | null
  readonly updatedAt: number
}

interface Row {
  readonly slug: string
  readonly body: string
  readonly credential: string | null
  readonly credential_last4: string | null
  readonly enabled: number | string | boolean
  readonly updated_at: number | string
}

/** The credential of a change: `undefined` keeps the stored one, `null` removes it. */
export interface ProviderWrite {
  readonly provider: Catalog.Provider
  readonly apiKey: string | null | undefined
  readonly now: number
}

const aad = (slug: string) => `provider:${slug}`

const decodeProvider = Schema.decodeUnknownSync(Catalog.Provider)

export class ProviderRepo extends Context.Service<ProviderRepo, {
  /** Bumped by every change: what replicas poll to know their catalog is current. */
  readonly version: Effect.Effect<number, StoreUnavailable>
  readonly all: Effect.Effect<ReadonlyArray<StoredProvider>, StoreUnavailable>
  readonly get: (slug: string) => Effect.Effect<Option.Option<StoredProvider>, StoreUnavailable>
  /** `None` when the slug is taken. */
  readonly create: (write: ProviderWrite) => Effect.Effect<Option.Option<StoredProvider>, StoreUnavailable>
  readonly update: (write: ProviderWrite) => Effect.Effect<Option.Option<StoredProvider>, StoreUnavailable>
  /** The provider removed, if there was one. */
  readonly remove: (slug: string) => Effect.Effect<Option.Option<StoredProvider>, StoreUnavailable>
}>()("@switchyard/server/store/ProviderRepo") {
  static readonly layer = Layer.effect(
    ProviderRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const cipher = yield* CredentialCipher

      const toStored = (row: Row): StoredProvider => {
        const enabled = row.enabled === true || Number(row.enabled) === 1
        const provider = decodeProvider({ ...JSON.parse(row.body), enabled })
        return {
          provider,
          credential: row.credential === null ? Option.none() : cipher.open(row.credential, aad(row.slug)),
          credentialSet: row.credential !== null,
          last4: row.credential_last4,
          updatedAt: Number(row.updated_at)
        }
      }
      const columns = sql`slug, body, credential, credential_last4, enabled, updated_at`
      const bump = sql`UPDATE providers_head SET version = version + 1 WHERE id = 1 RETURNING version`
      const one = (slug: string) =>
        sql<Row>`SELECT ${columns} FROM providers WHERE slug = ${slug}`.pipe(Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), toStored)))
      const body = (provider: Catalog.Provider) => JSON.stringify(ManagedProvider.encode(provider))
      const sealed = (slug: string, apiKey: string) => ({
        credential: cipher.seal(Redacted.make(apiKey), aad(slug)),
        last4: ManagedProvider.last4(apiKey)
      })

      return ProviderRepo.of({
        version: sql<{ version: number | string }>`SELECT version FROM providers_head WHERE id = 1`.pipe(
          Effect.map((rows) => Number(rows[0]?.version ?? 0)),
          fromSqlError("providers.version")
        ),
        all: sql<Row>`SELECT ${columns} FROM providers ORDER BY created_at, slug`.pipe(
          Effect.map((rows) => rows.map(toStored)),
          fromSqlError("providers.list")
        ),
        get: (slug) => one(slug).pipe(fromSqlError("providers.get")),
        create: (write) =>
          sql.withTransaction(Effect.gen(function*() {
            const slug = write.provider.slug
            const secret = typeof write.apiKey === "string" ? sealed(slug, write.apiKey) : { credential: null, last4: null }
            const version = Number((yield* bump)[0]?.version ?? 0)
            const inserted = yield* sql`INSERT INTO providers (slug, body, credential, credential_last4, enabled, version, created_at, updated_at)
              VALUES (${slug}, ${body(write.provider)}, ${secret.credential}, ${secret.last4}, ${write.provider.enabled ? 1 : 0},
                ${version}, ${write.now}, ${write.now})
              ON CONFLICT (slug) DO NOTHING RETURNING slug`
            return inserted.length === 0 ? Option.none() : yield* one(slug)
          })).pipe(fromSqlError("providers.create")),
        update: (write) =>
          sql.withTransaction(Effect.gen(function*() {
            const slug = write.provider.slug
            const version = Number((yield* bump)[0]?.version ?? 0)
            const secret = write.apiKey === undefined
              ? sql``
              : write.apiKey === null
              ? sql`, credential = NULL, credential_last4 = NULL`
              : (() => {
                const s = sealed(slug, write.apiKey)
                return sql`, credential = ${s.credential}, credential_last4 = ${s.last4}`
              })()
            const updated = yield* sql`UPDATE providers SET body = ${body(write.provider)}, enabled = ${write.provider.enabled ? 1 : 0},
                version = ${version}, updated_at = ${write.now} ${secret}
              WHERE slug = ${slug} RETURNING slug`
            return updated.length === 0 ? Option.none() : yield* one(slug)
          })).pipe(fromSqlError("providers.update")),
        remove: (slug) =>
          sql.withTransaction(Effect.gen(function*() {
            const found = yield* one(slug)
            if (Option.isNone(found)) return found
            yield* bump
            yield* sql`DELETE FROM providers WHERE slug = ${slug}`
            return found
          })).pipe(fromSqlError("providers.delete"))
      })
    })
  )
}
