import { PgClient } from "@effect/sql-pg"
import { Cause, Clock, Config, Data, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as DataDirLock from "../sqlite/DataDirLock.ts"
import { migrate } from "./Migrations.ts"
import { InFlight } from "../money/InFlight.ts"
import { StoreChanges } from "../sql/StoreChanges.ts"
import * as SqliteClient from "../sqlite/SqliteClient.ts"
import * as StoreStatements from "../sql/StoreStatements.ts"

/**
 * Which store the process uses: PostgreSQL when `DATABASE_URL` is set (several replicas share
 * it), otherwise SQLite in `<SWITCHYARD_DATA_DIR>/switchyard.db` (default `./.switchyard`; its
 * write-ahead log `switchyard.db-wal` beside it), held by this gateway through the data
 * directory's lock.
 */
export interface StoreChoice {
  readonly kind: "postgres" | "sqlite"
  readonly url?: Redacted.Redacted<string>
  readonly dataDir: string
  /**
   * The embedded store's commit mode (`SWITCHYARD_SQLITE_SYNCHRONOUS`): `full` (default), every
   * commit on disk before its answer; `normal`, the write-ahead log synced only at checkpoints, so
   * a power cut (not a crash of the process) may lose the last answered requests' rows.
   */
  readonly synchronous: "full" | "normal"
}

export const StoreConfig = Config.all({
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.String("SWITCHYARD_DATA_DIR").pipe(Config.withDefault(".switchyard")),
  synchronous: Config.Literals(["full", "normal"], "SWITCHYARD_SQLITE_SYNCHRONOUS").pipe(Config.withDefault("full" as const))
}).pipe(
  Config.map(({ databaseUrl, dataDir, synchronous }): StoreChoice =>
    Option.match(Option.filter(databaseUrl, (url) => Redacted.value(url).length > 0), {
      onNone: () => ({ kind: "sqlite", dataDir: NodePath.resolve(dataDir), synchronous }),
      onSome: (url) => ({ kind: "postgres", url, dataDir: NodePath.resolve(dataDir), synchronous })
    })
  )
)

/** The SQLite file of a data directory. */
export const sqliteFile = (dataDir: string) => NodePath.join(dataDir, "switchyard.db")

/** How a PGlite data directory of an earlier version is copied into the SQLite store. */
export const importCommand = (dataDir: string) => `pnpm store:import-pglite --data-dir ${JSON.stringify(dataDir)}`

/** A data directory of an earlier version: a PGlite store and no SQLite one. */
class PgliteDataDir extends Data.TaggedError("PgliteDataDir")<{ readonly dataDir: string }> {
  override get message() {
    return `the data directory ${this.dataDir} holds a PGlite store of an earlier version (pglite/) and no SQLite store; ` +
      `stop here and copy it with: ${importCommand(this.dataDir)} (see docs/configuration.md, "The store")`
  }
}

const refuseOldStore = (dataDir: string) =>
  Effect.suspend(() =>
    Fs.existsSync(NodePath.join(dataDir, "pglite")) && !Fs.existsSync(sqliteFile(dataDir))
      ? Effect.fail(new PgliteDataDir({ dataDir }))
      : Effect.void
  )

/** The store that failed, named in the start error: never `DATABASE_URL` when it is unset. */
const storeName = (choice: StoreChoice) =>
  choice.kind === "postgres" ? "the database (DATABASE_URL)" : `the SQLite store ${sqliteFile(choice.dataDir)} (SWITCHYARD_DATA_DIR)`

const drivers = {
  // The pool keeps the network's time, the wall clock, even where the gateway's clock is a test's:
  // its connect timeout and idle close must not fire because a test moved the gateway by a day.
  postgres: (choice: StoreChoice) =>
    PgClient.layer({ url: choice.url!, maxConnections: 16 }).pipe(
      Layer.provide(Layer.succeed(Clock.Clock, Clock.Clock.defaultValue()))
    ) as Layer.Layer<SqlClient.SqlClient, unknown>,
  sqlite: (choice: StoreChoice) =>
    SqliteClient.layer(sqliteFile(choice.dataDir), { synchronous: choice.synchronous === "normal" ? "NORMAL" : "FULL" }).pipe(
      // Held from before the file opens until after it has closed; an old PGlite directory is refused first.
      Layer.provide(Layer.effectDiscard(Effect.andThen(refuseOldStore(choice.dataDir), DataDirLock.acquire(choice.dataDir))))
    ) as Layer.Layer<SqlClient.SqlClient, unknown>
} as const

/** What every store user shares beside the SQL client. */
export type StoreServices = SqlClient.SqlClient | StoreStatements.StoreStatements | StoreChanges | InFlight

/**
 * Beside a SQL client: the statement counter (every statement run in this layer's context is
 * counted) and word of changes to keys and workspaces (over `LISTEN/NOTIFY` on PostgreSQL).
 */
export const support = <E, R>(
  client: Layer.Layer<SqlClient.SqlClient, E, R>
): Layer.Layer<StoreServices, E, R> =>
  Layer.mergeAll(StoreChanges.layer, StoreStatements.counting, InFlight.layer).pipe(
    Layer.provideMerge(StoreStatements.StoreStatements.layer),
    Layer.provideMerge(client)
  )

/** The store could not be opened or migrated: names which store (the start error's line). */
class StoreStartFailed extends Data.TaggedError("StoreStartFailed")<{ readonly store: string; readonly cause: unknown }> {}

const storeFailures = new Set(["SqlError", "MigrationError"])

/**
 * The SQL client for a store choice, migrated to the latest schema before anything uses it.
 */
export const layerFor = (choice: StoreChoice): Layer.Layer<StoreServices, unknown> =>
  support(
    Layer.effectDiscard(migrate).pipe(
      Layer.provideMerge(drivers[choice.kind](choice)),
      Layer.catchCause((cause) => {
        const error = Cause.squash(cause) as { readonly _tag?: unknown }
        return Layer.effect(SqlClient.SqlClient, Effect.failCause(
          typeof error?._tag === "string" && storeFailures.has(error._tag)
            ? Cause.fail(new StoreStartFailed({ store: storeName(choice), cause: error }))
            : cause
        ))
      })
    )
  )

/**
 * The SQL client chosen from the environment.
 */
export const layer: Layer.Layer<StoreServices, unknown> = Layer.unwrap(
  Effect.gen(function*() {
    return layerFor(yield* StoreConfig)
  })
)
