import { assert, describe, it } from "@effect/vitest"
import { type Cause, ConfigProvider, Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as Database from "../../src/store/database/Database.ts"
import * as StartupFailure from "../../src/StartupFailure.ts"
import { tempDir } from "../support/TestServer.ts"

/** The one start line for a SQLite store in `dataDir`, or `undefined` when it opened. */
const startLine = (dataDir: string) =>
  Effect.gen(function*() {
    const exit = yield* Effect.exit(Effect.scoped(Layer.build(Database.layerFor({ kind: "sqlite", dataDir, synchronous: "full" }))))
    return Exit.isFailure(exit) ? StartupFailure.describe(exit.cause as Cause.Cause<unknown>) : undefined
  })

/** The store's settings as `env` gives them. */
const configFrom = (env: Record<string, string>) =>
  Effect.exit(Effect.gen(function*() {
    return yield* Database.StoreConfig
  }).pipe(Effect.provideService(ConfigProvider.ConfigProvider, ConfigProvider.fromEnv({ env }))))

const withDir = <A, E>(prefix: string, f: (dir: string) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => tempDir(prefix)),
    f,
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  )

describe("starting the embedded store", () => {
  it.effect("an empty data directory gets its SQLite file; a second start opens it", () =>
    withDir("store-start", (dir) =>
      Effect.gen(function*() {
        assert.strictEqual(yield* startLine(dir), undefined)
        assert.isTrue(Fs.existsSync(NodePath.join(dir, "switchyard.db")))
        assert.strictEqual(yield* startLine(dir), undefined)
      })))

  it.effect("a PGlite data directory of an earlier version is refused with one line naming the command that copies it", () =>
    withDir("store-pglite", (dir) =>
      Effect.gen(function*() {
        Fs.mkdirSync(NodePath.join(dir, "pglite"))
        Fs.writeFileSync(NodePath.join(dir, "pglite", "PG_VERSION"), "17\n")
        const line = yield* startLine(dir)
        assert.isString(line)
        assert.notInclude(line!, "\n")
        assert.include(line!, `the data directory ${dir} holds a PGlite store of an earlier version`)
        assert.include(line!, Database.importCommand(dir))
        // Nothing was created beside it: the old store is left as it was.
        assert.isFalse(Fs.existsSync(NodePath.join(dir, "switchyard.db")))
        // Once copied (a SQLite store beside it), the gateway starts on the SQLite store.
        yield* withDir("store-copied", (copied) =>
          Effect.gen(function*() {
            assert.strictEqual(yield* startLine(copied), undefined)
            Fs.copyFileSync(NodePath.join(copied, "switchyard.db"), NodePath.join(dir, "switchyard.db"))
          }))
        assert.strictEqual(yield* startLine(dir), undefined)
      })))

  it.effect("a store that cannot be opened is named in the start line, and DATABASE_URL is not", () =>
    withDir("store-broken", (dir) =>
      Effect.gen(function*() {
        // A directory where the database file belongs.
        Fs.mkdirSync(NodePath.join(dir, "switchyard.db"))
        const line = yield* startLine(dir)
        assert.isString(line)
        assert.include(line!, `cannot use the SQLite store ${NodePath.join(dir, "switchyard.db")} (SWITCHYARD_DATA_DIR)`)
        assert.notInclude(line!, "DATABASE_URL")
      })))

  it.effect("SWITCHYARD_SQLITE_SYNCHRONOUS: full by default, normal on request (fsync at checkpoints), anything else refused", () =>
    withDir("store-synchronous", (dir) =>
      Effect.gen(function*() {
        const unset = yield* configFrom({ SWITCHYARD_DATA_DIR: dir })
        assert.isTrue(Exit.isSuccess(unset) && unset.value.synchronous === "full")
        const normal = yield* configFrom({ SWITCHYARD_DATA_DIR: dir, SWITCHYARD_SQLITE_SYNCHRONOUS: "normal" })
        assert.isTrue(Exit.isSuccess(normal) && normal.value.synchronous === "normal")
        const other = yield* configFrom({ SWITCHYARD_DATA_DIR: dir, SWITCHYARD_SQLITE_SYNCHRONOUS: "off" })
        if (!Exit.isFailure(other)) return assert.fail("SWITCHYARD_SQLITE_SYNCHRONOUS=off was taken")
        assert.include(StartupFailure.describe(other.cause as Cause.Cause<unknown>), "SWITCHYARD_SQLITE_SYNCHRONOUS")
        // What SQLite was told: 2 is FULL, 1 NORMAL.
        const pragma = (synchronous: "full" | "normal") =>
          Effect.service(SqlClient.SqlClient).pipe(
            Effect.flatMap((sql) => sql.unsafe<{ synchronous: number }>("PRAGMA synchronous")),
            Effect.map((rows) => rows[0]!.synchronous),
            Effect.provide(Database.layerFor({ kind: "sqlite", dataDir: dir, synchronous }))
          )
        assert.strictEqual(yield* pragma("full"), 2)
        assert.strictEqual(yield* pragma("normal"), 1)
      })))
})
