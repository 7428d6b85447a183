import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Providers created through the API (ProviderRepo.ts): the provider in its config-file form as
 * JSON text, its sealed credential, enabled as 0/1, and a one-row head whose version every change
 * bumps, which every replica polls to rebuild its catalog. The common subset of PostgreSQL and
 * SQLite: times in epoch milliseconds.
 */
export const managedProviders = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE providers (
    slug text PRIMARY KEY,
    body text NOT NULL,
    credential text,
    credential_last4 text,
    enabled integer NOT NULL,
    version bigint NOT NULL,
    created_at bigint NOT NULL,
    updated_at bigint NOT NULL
  )`
  yield* sql`CREATE TABLE providers_head (
    id integer PRIMARY KEY,
    version bigint NOT NULL
  )`
  yield* sql`INSERT INTO providers_head (id, version) VALUES (1, 0)`
})
