import { PgClient } from "@effect/sql-pg"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import type { SqlClient } from "effect/sql"
import * as NodePath from "node:path"
import * as DataDirLock from "./DataDirLock.ts"
import { migrate } from "./Migrations.ts"
import * as PgliteClient from "./PgliteClient.ts"
import { InFlight } from "./InFlight.ts"
import { StoreChanges } from "./StoreChanges.ts"
import * as StoreStatements from "./StoreStatements.ts"

/**
 * Which store the process uses: PostgreSQL when `DATABASE_URL` is set, otherwise PGlite under
 * `SWITCHYARD_DATA_DIR` (default `./.switchyard`). `SWITCHYARD_PGLITE_BASELINE_CODE=true` keeps
 * PGlite's WebAssembly on V8's baseline code: less memory, more CPU (see PgliteWasm.ts).
 * `SWITCHYARD_PGLITE_FSYNC=false` lets PGlite's commits reach the OS but not the disk (see
 * PgliteDurability.ts); by default they are on disk before their answer.
 */
export interface StoreChoice {
  readonly kind: "postgres" | "pglite"
  readonly url?: Redacted.Redacted<string>
  readonly dataDir: string
  readonly pgliteBaselineCode?: boolean
  readonly pgliteFsync?: boolean
}

export const StoreConfig = Config.all({
  databaseUrl: Config.option(Config.Redacted("DATABASE_URL")),
  dataDir: Config.String("SWITCHYARD_DATA_DIR").pipe(Config.withDefault(".switchyard")),
  pgliteBaselineCode: Config.Boolean("SWITCHYARD_PGLITE_BASELINE_CODE").pipe(Config.withDefault(false)),
  pgliteFsync: Config.Boolean("SWITCHYARD_PGLITE_FSYNC").pipe(Config.withDefault(true))
}).pipe(
  Config.map(({ databaseUrl, dataDir, pgliteBaselineCode, pgliteFsync }): StoreChoice =>
    Option.match(databaseUrl, {
      onNone: () => ({ kind: "pglite", dataDir: NodePath.resolve(dataDir), pgliteBaselineCode, pgliteFsync }),
      onSome: (url) => Redacted.value(url).length === 0
        ? { kind: "pglite", dataDir: NodePath.resolve(dataDir), pgliteBaselineCode, pgliteFsync }
        : { kind: "postgres", url, dataDir: NodePath.resolve(dataDir) }
    })
  )
)

const drivers = {
  postgres: (choice: StoreChoice) =>
    PgClient.layer({ url: choice.url!, maxConnections: 16 }) as Layer.Layer<SqlClient.SqlClient, unknown>,
  pglite: (choice: StoreChoice) =>
    PgliteClient.layer(NodePath.join(choice.dataDir, "pglite"), {
      baselineCode: choice.pgliteBaselineCode ?? false,
      fsync: choice.pgliteFsync ?? true
    }).pipe(
      // Held from before PGlite opens until after it has closed.
      Layer.provide(Layer.effectDiscard(DataDirLock.acquire(choice.dataDir)))
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

/**
 * The SQL client for a store choice, migrated to the latest schema before anything uses it.
 */
export const layerFor = (choice: StoreChoice): Layer.Layer<StoreServices, unknown> =>
  support(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(drivers[choice.kind](choice))))

/**
 * The SQL client chosen from the environment.
 */
export const layer: Layer.Layer<StoreServices, unknown> = Layer.unwrap(
  Effect.gen(function*() {
    return layerFor(yield* StoreConfig)
  })
)
