import { PgClient } from "@effect/sql-pg"
import { assert, describe, it, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { pathToFileURL } from "node:url"
import * as MoneyFunctions from "../../src/store/money/MoneyFunctions.ts"
import { migrate, migrations } from "../../src/store/database/Migrations.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"

/**
 * An empty, unmigrated PostgreSQL database: the test decides which migrations run. PostgreSQL keeps
 * its migration history; a SQLite store starts from the baseline (test/store/SqliteSchema.test.ts).
 */
const driver = Layer.unwrap(Effect.gen(function*() {
    const url = yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url)))
    return PgClient.layer({ url: Redacted.make(url), maxConnections: 4 }) as Layer.Layer<SqlClient.SqlClient, unknown>
  }))

const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0011"))
const migrateBefore = Migrator.make({})({ loader: Migrator.fromRecord(before), table: "switchyard_migrations" })

/** The body of a function as `CREATE FUNCTION` gives it (between the dollar quotes). */
const bodyOf = (f: MoneyFunctions.MoneyFunction) => {
  const text = MoneyFunctions.definition(f)
  return text.slice(text.indexOf("$$") + 2, text.lastIndexOf("$$"))
}

describe.skipIf(storeKind !== "postgres")("PostgreSQL's migration history", () => {
  layer(driver, { timeout: 120_000, excludeTestServices: true })(`the money functions (${storeKind})`, (it) => {
    it.effect("a migration drops the functions of earlier versions, and each live one is created as MoneyFunctions defines it", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* migrateBefore
        // As a store created by an earlier version has them.
        yield* sql.unsafe(`CREATE FUNCTION switchyard_batch(p_ops jsonb) RETURNS jsonb LANGUAGE sql AS $$ SELECT p_ops $$`)
        yield* sql.unsafe(`CREATE FUNCTION switchyard_settle(p_hold text, p_key text) RETURNS void LANGUAGE sql AS $$ SELECT $$`)
        yield* migrate
        const found = yield* sql<{ name: string; body: string }>`SELECT proname AS name, prosrc AS body FROM pg_proc
          WHERE proname LIKE 'switchyard\\_%' ORDER BY proname`
        assert.deepStrictEqual(found.map((r) => r.name), MoneyFunctions.all.map((f) => f.name).sort())
        for (const f of MoneyFunctions.all) {
          assert.strictEqual(found.find((r) => r.name === f.name)?.body, bodyOf(f), f.name)
        }
      }))
  })
})

// A store runs `MoneyFunctions.replace` only when it ran a migration (Migrations.migrate), so a
// function changed without a migration would never reach a store migrated before. The definitions
// are compared, as SQL, with those of the commit that brought the current set of migrations onto
// this branch (its first-parent history: a merge brings a branch's migrations and functions together).
const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const git = (args: ReadonlyArray<string>) => ChildProcess.execFileSync("git", [...args], { cwd: root, encoding: "utf8" })
// Where each file is now, then where it was before the store's files went into rooms.
const modulePaths = ["apps/server/src/store/money/MoneyFunctions.ts", "apps/server/src/store/MoneyFunctions.ts"]
const migrationsPaths = ["apps/server/src/store/database/Migrations.ts", "apps/server/src/store/Migrations.ts"]

/** A file as that commit holds it, at the first of its paths the commit has. */
const show = (commit: string, paths: ReadonlyArray<string>): string => {
  const path = paths.find((candidate) => ChildProcess.spawnSync("git", ["cat-file", "-e", `${commit}:${candidate}`], { cwd: root }).status === 0)
  return git(["show", `${commit}:${path ?? paths[0]}`])
}

/** The migrations `Migrations.ts` of that commit lists. */
const migrationsAt = (commit: string): string =>
  [...show(commit, migrationsPaths).matchAll(/^\s*"(\d{4}_\w+)":/gmu)].map((m) => m[1]).sort().join(",")

/** Every definition as `MoneyFunctions.ts` of that commit writes it (the module run by Node as it was). */
const definitionsAt = (commit: string): ReadonlyArray<string> => {
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "money-functions-"))
  try {
    const file = NodePath.join(dir, "MoneyFunctions.ts")
    Fs.writeFileSync(file, show(commit, modulePaths))
    Fs.symlinkSync(NodePath.join(root, "apps", "server", "node_modules"), NodePath.join(dir, "node_modules"))
    const script = `const m = await import(${JSON.stringify(pathToFileURL(file).href)}); process.stdout.write(JSON.stringify(m.all.map(m.definition)))`
    return JSON.parse(ChildProcess.execFileSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" }))
  } finally {
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

describe("the money functions and the migrations", () => {
  it("no function changed since the commit that brought the current migrations", () => {
    const current = Object.keys(migrations).sort().join(",")
    // A migration not committed yet: the change comes with it.
    if (migrationsAt("HEAD") !== current) return
    // This branch's commits that changed Migrations.ts, newest first: the last of the run that lists today's migrations brought them.
    const commits = git(["log", "--first-parent", "--format=%H", "--", ...migrationsPaths]).trim().split("\n")
    const older = commits.findIndex((commit) => migrationsAt(commit) !== current)
    const added = commits[(older === -1 ? commits.length : older) - 1]!
    const then = definitionsAt(added)
    const now = MoneyFunctions.all.map(MoneyFunctions.definition)
    const changed = MoneyFunctions.all.filter((_, i) => then[i] !== now[i]).map((f) => f.name)
    assert.deepStrictEqual(
      { count: now.length, changed },
      { count: then.length, changed: [] },
      `changed since ${added}: ship the change with a migration, so stores migrated before run MoneyFunctions.replace`
    )
  }, 60_000)
})
