import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Semaphore, Stream } from "effect"
import type { Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import type { SqlConnection } from "effect/sql"
import * as SqlError from "effect/sql/SqlError"
import * as PgliteInit from "./PgliteInit.ts"
import * as PgliteWasm from "./PgliteWasm.ts"

const errorFrom = (operation: string) => (cause: unknown) => {
  const code = (cause as { code?: unknown } | null)?.code
  const props = { cause, message: cause instanceof Error ? cause.message : String(cause), operation }
  if (code === "23505") {
    const constraint = (cause as { constraint?: string }).constraint ?? ""
    return new SqlError.SqlError({ reason: new SqlError.UniqueViolation({ ...props, constraint }) })
  }
  if (typeof code === "string" && code.startsWith("23")) {
    return new SqlError.SqlError({ reason: new SqlError.ConstraintError(props) })
  }
  if (typeof code === "string" && code.startsWith("42")) {
    return new SqlError.SqlError({ reason: new SqlError.SqlSyntaxError(props) })
  }
  return new SqlError.SqlError({ reason: new SqlError.UnknownError(props) })
}

class Connection implements SqlConnection.Connection {
  readonly pglite: PGlite
  constructor(pglite: PGlite) {
    this.pglite = pglite
  }
  private rows(operation: string, sql: string, params: ReadonlyArray<unknown>) {
    return Effect.tryPromise({
      try: () => this.pglite.query<Record<string, unknown>>(sql, params as Array<unknown>),
      catch: errorFrom(operation)
    }).pipe(Effect.map((result) => result.rows))
  }
  private values(operation: string, sql: string, params: ReadonlyArray<unknown>) {
    return Effect.tryPromise({
      try: () => this.pglite.query<Array<unknown>>(sql, params as Array<unknown>, { rowMode: "array" }),
      catch: errorFrom(operation)
    }).pipe(Effect.map((result) => result.rows as ReadonlyArray<ReadonlyArray<unknown>>))
  }
  execute(sql: string, params: ReadonlyArray<unknown>, transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined) {
    const rows = this.rows("execute", sql, params)
    return transformRows ? Effect.map(rows, transformRows) : rows
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>) {
    return Effect.tryPromise({ try: () => this.pglite.query(sql, params as Array<unknown>), catch: errorFrom("executeRaw") })
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return this.values("executeValues", sql, params)
  }
  executeValuesUnprepared(sql: string, params: ReadonlyArray<unknown>) {
    return this.values("executeValuesUnprepared", sql, params)
  }
  executeUnprepared(sql: string, params: ReadonlyArray<unknown>, transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined) {
    const run = params.length === 0
      ? Effect.tryPromise({ try: () => this.pglite.exec(sql), catch: errorFrom("executeUnprepared") }).pipe(
        Effect.map((results) => (results.at(-1)?.rows ?? []) as ReadonlyArray<Record<string, unknown>>)
      )
      : this.rows("executeUnprepared", sql, params)
    return transformRows ? Effect.map(run, transformRows) : run
  }
  executeStream(sql: string, params: ReadonlyArray<unknown>, transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined) {
    return Stream.fromArrayEffect(this.execute(sql, params, transformRows))
  }
}

/**
 * A `SqlClient` over an in-process PGlite database. PGlite runs one statement at a time, so every
 * statement and every transaction leases the one connection (sql's single-connection acquirers); the SQL compiler is sql-pg's, so both
 * stores compile statements identically.
 */
export const make = (dataDir: string | undefined): Effect.Effect<SqlClient.SqlClient, SqlError.SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const pglite = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          // initdb in a child process: its ~1 GB peak never enters this one (PgliteInit.ts).
          if (dataDir !== undefined) await PgliteInit.ensureDataDir(dataDir)
          // PGlite's default 128 MB of shared buffers is most of its memory; the gateway's working
          // set (keys, holds, recent ledger) is a few MB. 16 MB: about 110 MB less RSS.
          const options = { postgresqlconf: ["shared_buffers=16MB"] }
          // Baseline WebAssembly code only: V8's tier-up of Postgres peaks at 500+ MB (PgliteWasm.ts).
          return await PgliteWasm.withBaselineCode(async () => {
            const db = dataDir === undefined ? new PGlite(options) : new PGlite(dataDir, options)
            await db.waitReady
            return db
          })
        },
        catch: errorFrom("connect")
      }),
      (db) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption(5000), Effect.ignore)
    )
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(new Connection(pglite)),
      semaphore: Semaphore.makeUnsafe(1)
    })
    return yield* SqlClient.make({
      ...acquirers,
      driver: "pglite",
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    })
  })

export const layer = (dataDir: string | undefined): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(dataDir)).pipe(Layer.provide(Reactivity.layer))
