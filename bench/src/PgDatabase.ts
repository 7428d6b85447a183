import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"

/**
 * A throw-away database on the PostgreSQL server of `DATABASE_URL`, so that Switchyard starts on
 * an empty store (and creates the benchmark's keys) without touching the named database.
 */
const onServer = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient.SqlClient)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )

export const create = async (serverUrl: string): Promise<string> => {
  const name = `switchyard_bench_${Date.now().toString(36)}_${Math.random().toString(36).slice(2, 8)}`
  await onServer(serverUrl, (sql) => sql.unsafe(`CREATE DATABASE ${name}`))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export const drop = (serverUrl: string, databaseUrl: string) =>
  onServer(serverUrl, (sql) => sql.unsafe(`DROP DATABASE IF EXISTS ${new URL(databaseUrl).pathname.slice(1)} WITH (FORCE)`))
