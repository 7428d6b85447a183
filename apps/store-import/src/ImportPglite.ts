/**
 * Copies the PGlite store of an earlier Switchyard (`<data dir>/pglite`) into the SQLite store the
 * gateway now opens (`<data dir>/switchyard.db`): keys, workspaces, members, budgets, credits,
 * BYOK credentials, interns, the spend counters, the ledger and its daily rollups. The embeddings
 * cache is dropped (it fills again), and so are the holds and process rows (leases of processes
 * that are gone: a gateway starting on PGlite released them too).
 *
 * **Details**
 *
 * - The data directory's lock is held throughout, so no gateway starts on it meanwhile.
 * - The SQLite file is built beside the final one (`switchyard.db.importing`), migrated by the
 *   gateway's own migrations, filled in one transaction per table, checked, and only then renamed
 *   into place: an import that fails or is interrupted leaves no store the gateway would open.
 * - The check compares every copied table's row count and the sums of its money and token
 *   columns between the two stores; a difference fails the import.
 * - Values cross as text: timestamps as epoch milliseconds, booleans as 1/0, days as `YYYY-MM-DD`
 *   (or `-infinity`), money as its exact decimal digits.
 * - The PGlite directory is left as it was; remove it once the gateway runs on the copy.
 */
import { PGlite } from "@electric-sql/pglite"
import * as DataDirLock from "@switchyard/server/store/sqlite/DataDirLock"
import { migrate } from "@switchyard/server/store/database/Migrations"
import * as SqliteClient from "@switchyard/server/store/sqlite/SqliteClient"
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { DatabaseSync } from "node:sqlite"

/** The tables copied, parents before children, with the columns whose sums the check compares. */
const tables: ReadonlyArray<{ readonly name: string; readonly sums: ReadonlyArray<string>; readonly key: string }> = [
  { name: "workspaces", sums: [], key: "id" },
  { name: "users", sums: [], key: "id" },
  { name: "memberships", sums: [], key: "user_id, workspace_id" },
  { name: "api_keys", sums: ["limit_nanos"], key: "seq" },
  { name: "credit_accounts", sums: ["credits_nanos", "usage_nanos"], key: "workspace_id" },
  { name: "credit_grants", sums: ["amount_nanos"], key: "id" },
  { name: "byok_credentials", sums: [], key: "id" },
  { name: "interns", sums: [], key: "id" },
  { name: "workspace_budgets", sums: ["limit_nanos"], key: "id" },
  { name: "key_spend", sums: ["spent_nanos", "byok_nanos"], key: "key_id, day" },
  { name: "workspace_spend", sums: ["spent_nanos", "byok_nanos"], key: "workspace_id, day" },
  { name: "ledger", sums: ["cost_nanos", "prompt_tokens", "total_tokens", "cached_tokens"], key: "generation_id" },
  { name: "ledger_daily", sums: ["requests", "cost_nanos", "prompt_tokens"], key: "workspace_id, day, key_id, model, provider, is_byok" },
  { name: "ledger_pruned", sums: [], key: "singleton" }
]

/** What was copied: per table, its rows and the sums both stores agree on. */
interface Imported {
  readonly file: string
  readonly tables: ReadonlyArray<{ readonly name: string; readonly rows: number; readonly sums: Record<string, string> }>
}

export class ImportFailed extends Error {}

/** A PostgreSQL column as text SQLite stores in its type (see the server's `migrations/SqliteBaseline.ts`). */
const asText = (column: string, type: string) => {
  const c = `"${column}"`
  switch (type) {
    case "timestamp with time zone":
      return `(round(extract(epoch FROM ${c}) * 1000))::bigint::text`
    case "boolean":
      return `CASE WHEN ${c} THEN '1' WHEN NOT ${c} THEN '0' END`
    default:
      return `${c}::text`
  }
}

const pageRows = 5_000

const sumsOf = (query: (sql: string) => Promise<Record<string, string>>, table: string, sums: ReadonlyArray<string>) =>
  query(`SELECT CAST(count(*) AS text) AS rows${sums.map((s) => `, CAST(COALESCE(SUM(${s}), 0) AS text) AS ${s}`).join("")} FROM ${table}`)

/**
 * Copies `<dataDir>/pglite` into `<dataDir>/switchyard.db` (see the module's comment). Fails
 * without a PGlite store, when a SQLite store is already there, or when the check finds a
 * difference.
 */
export const importPglite = (dataDir: string, log: (line: string) => void = () => {}): Promise<Imported> =>
  Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const source = NodePath.join(dataDir, "pglite")
    const target = NodePath.join(dataDir, "switchyard.db")
    const building = `${target}.importing`
    if (!Fs.existsSync(NodePath.join(source, "PG_VERSION"))) {
      return yield* Effect.fail(new ImportFailed(`no PGlite store in ${source}`))
    }
    if (Fs.existsSync(target)) {
      return yield* Effect.fail(new ImportFailed(`${target} exists already: the data directory has its SQLite store`))
    }
    yield* DataDirLock.acquire(dataDir)
    for (const suffix of ["", "-wal", "-shm"]) Fs.rmSync(`${building}${suffix}`, { force: true })
    // The gateway's schema, by its own migrations.
    yield* Effect.scoped(Layer.build(Layer.effectDiscard(migrate).pipe(Layer.provideMerge(SqliteClient.layer(building)))))

    const pg = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const db = new PGlite(source)
        await db.waitReady
        return db
      }),
      (db) => Effect.promise(() => db.close())
    )
    const sqlite = yield* Effect.acquireRelease(
      Effect.sync(() => new DatabaseSync(building)),
      (db) => Effect.sync(() => db.isOpen && db.close())
    )
    const pgOne = (sql: string) => pg.query<Record<string, string>>(sql).then((r) => r.rows[0]!)
    const sqliteOne = (sql: string) => Promise.resolve(sqlite.prepare(sql).get() as Record<string, string>)

    const copied: Array<Imported["tables"][number]> = []
    for (const table of tables) {
      const pgColumns = (yield* Effect.promise(() =>
        pg.query<{ name: string; type: string }>(
          `SELECT column_name AS name, data_type AS type FROM information_schema.columns
            WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
          [table.name]
        )
      )).rows
      const sqliteColumns = new Set((sqlite.prepare(`SELECT name FROM pragma_table_info(?)`).all(table.name) as Array<{ name: string }>).map((r) => r.name))
      const columns = pgColumns.filter((c) => sqliteColumns.has(c.name))
      if (columns.length === 0) continue
      const select = `SELECT ${columns.map((c) => `${asText(c.name, c.type)} AS "${c.name}"`).join(", ")} FROM ${table.name}`
      const insert = sqlite.prepare(
        `INSERT INTO ${table.name} (${columns.map((c) => `"${c.name}"`).join(", ")}) VALUES (${columns.map(() => "?").join(", ")})`
      )
      sqlite.exec("BEGIN IMMEDIATE")
      let rows = 0
      // Pages in the key's order (the table's own columns, not the text the select gives them);
      // after a page's last key where the key is one column, else by offset.
      const order = table.key.split(", ").map((k) => `${table.name}.${k}`).join(", ")
      const single = !table.key.includes(",")
      let last: string | null = null
      for (let offset = 0;; offset += pageRows) {
        const page: ReadonlyArray<Record<string, string | null>> = (yield* Effect.promise(() =>
          single && last !== null
            ? pg.query<Record<string, string | null>>(
              `${select} WHERE ${order} > CAST($1 AS ${pgColumns.find((c) => c.name === table.key)!.type}) ORDER BY ${order} LIMIT ${pageRows}`,
              [last]
            )
            : pg.query<Record<string, string | null>>(`${select} ORDER BY ${order} LIMIT ${pageRows}${single ? "" : ` OFFSET ${offset}`}`)
        )).rows
        for (const row of page) insert.run(...columns.map((c) => row[c.name] ?? null))
        rows += page.length
        if (page.length < pageRows) break
        if (single) last = page[page.length - 1]![table.key] ?? null
      }
      sqlite.exec("COMMIT")
      const [before, after] = yield* Effect.promise(() =>
        Promise.all([sumsOf(pgOne, table.name, table.sums), sumsOf(sqliteOne, table.name, table.sums)])
      )
      if (JSON.stringify(before) !== JSON.stringify(after)) {
        return yield* Effect.fail(
          new ImportFailed(`${table.name}: the copy differs (PGlite ${JSON.stringify(before)}, SQLite ${JSON.stringify(after)})`)
        )
      }
      const { rows: _, ...sums } = after
      copied.push({ name: table.name, rows, sums })
      log(`${table.name}: ${rows} rows${table.sums.length > 0 ? `, ${table.sums.map((s) => `${s} ${sums[s]}`).join(", ")}` : ""}`)
    }
    const check = sqlite.prepare("PRAGMA foreign_key_check").all()
    if (check.length > 0) return yield* Effect.fail(new ImportFailed(`foreign keys do not resolve: ${JSON.stringify(check.slice(0, 5))}`))
    sqlite.exec("PRAGMA optimize=0x10002")
    sqlite.close()
    Fs.renameSync(building, target)
    return { file: target, tables: copied } satisfies Imported
  })))
