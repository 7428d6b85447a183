// `node bench/src/ledgerStores.ts [--store pglite|sqlite] [--batches N] [--rows N] [--rounds N]`
//
// The default-store question of issue #31, measured: a batch of ledger rows (14 by default, what a
// flush carries at small c=16) written in one transaction, into the gateway's ledger table (its
// columns and indexes, `apps/server/src/store/migrations`), on a file in a fresh temporary
// directory:
//   - pglite: the gateway's own PGlite client (`PgliteClient.ts`: its settings, its wire protocol,
//     commits synced to disk), one multi-row INSERT per batch;
//   - sqlite: `node:sqlite` (built into Node 24), WAL with `synchronous=FULL` (commits on disk, as
//     the gateway's PGlite), one prepared multi-row INSERT per batch.
// Run each store in its own process (the default runs both, one after the other, as children):
// it prints CPU µs per row (median over the rounds) and the process's RSS after the writes.
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { parseArgs } from "node:util"

const { values } = parseArgs({
  options: {
    store: { type: "string" },
    batches: { type: "string", default: "300" },
    rows: { type: "string", default: "14" },
    rounds: { type: "string", default: "5" }
  },
  strict: true
})
const batches = Number(values.batches)
const rowsPerBatch = Number(values.rows)
const rounds = Number(values.rounds)

const columns = [
  "generation_id",
  "key_id",
  "workspace_id",
  "model",
  "provider",
  "prompt_tokens",
  "total_tokens",
  "cost_nanos",
  "is_byok",
  "created_at",
  "latency_ms",
  "cached_items",
  "cached_tokens"
] as const

const schema = (bool: string, time: string) => [
  `CREATE TABLE ledger (
    generation_id text PRIMARY KEY,
    key_id text NOT NULL,
    workspace_id text NOT NULL,
    model text NOT NULL,
    provider text NOT NULL,
    prompt_tokens integer NOT NULL,
    total_tokens integer NOT NULL,
    cost_nanos bigint NOT NULL CHECK (cost_nanos >= 0),
    is_byok ${bool} NOT NULL,
    created_at ${time} NOT NULL,
    latency_ms integer,
    cached_items integer NOT NULL DEFAULT 0 CHECK (cached_items >= 0),
    cached_tokens integer NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0)
  )`,
  "CREATE INDEX ledger_key_time ON ledger (key_id, created_at)",
  "CREATE INDEX ledger_workspace_time ON ledger (workspace_id, created_at)"
]

let serial = 0
const batch = (): Array<unknown> => {
  const params: Array<unknown> = []
  for (let i = 0; i < rowsPerBatch; i++) {
    serial += 1
    params.push(
      `gen-emb-${serial.toString(36)}-abcdefghijkl`,
      "key-0001",
      "default",
      "openai/text-embedding-3-small",
      "openai",
      12,
      12,
      240,
      false,
      new Date(1_764_000_000_000 + serial).toISOString(),
      3,
      0,
      0
    )
  }
  return params
}

const insertText = (placeholder: (n: number) => string) => {
  const tuples: Array<string> = []
  for (let r = 0; r < rowsPerBatch; r++) {
    tuples.push(`(${columns.map((_, c) => placeholder(r * columns.length + c + 1)).join(", ")})`)
  }
  return `INSERT INTO ledger (${columns.join(", ")}) VALUES ${tuples.join(", ")}`
}

const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[xs.length >> 1]!

const report = (store: string, perRow: Array<number>) => {
  const rss = Number(/VmRSS:\s+(\d+)/u.exec(Fs.readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024
  const hwm = Number(/VmHWM:\s+(\d+)/u.exec(Fs.readFileSync("/proc/self/status", "utf8"))?.[1] ?? 0) / 1024
  console.log(
    `| ${store} | ${median(perRow).toFixed(1)} (${Math.min(...perRow).toFixed(1)}–${Math.max(...perRow).toFixed(1)}) | ${rss.toFixed(0)} | ${hwm.toFixed(0)} |`
  )
}

const measure = async (write: () => Promise<void> | void): Promise<Array<number>> => {
  for (let i = 0; i < 50; i++) await write()
  const perRow: Array<number> = []
  for (let round = 0; round < rounds; round++) {
    const before = process.cpuUsage()
    for (let i = 0; i < batches; i++) await write()
    const used = process.cpuUsage(before)
    perRow.push((used.user + used.system) / (batches * rowsPerBatch))
  }
  return perRow
}

const dir = () => Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-ledger-"))

const sqlite = async () => {
  const { DatabaseSync } = await import("node:sqlite")
  const path = dir()
  const db = new DatabaseSync(NodePath.join(path, "ledger.db"))
  db.exec("PRAGMA journal_mode=WAL")
  db.exec("PRAGMA synchronous=FULL")
  for (const statement of schema("integer", "text")) db.exec(statement)
  const insert = db.prepare(insertText(() => "?"))
  const perRow = await measure(() => {
    const params = batch().map((v) => typeof v === "boolean" ? (v ? 1 : 0) : v) as Array<string | number>
    db.exec("BEGIN")
    insert.run(...params)
    db.exec("COMMIT")
  })
  report("node:sqlite (WAL, synchronous=FULL)", perRow)
  db.close()
  Fs.rmSync(path, { recursive: true, force: true })
}

const pglite = async () => {
  const { Effect, Layer, Context } = await import("effect")
  const { SqlClient } = await import("effect/sql")
  const PgliteClient = await import("../../apps/store-import/src/pglite/PgliteClient.ts")
  const path = dir()
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const sql = yield* Layer.build(PgliteClient.layer(NodePath.join(path, "pglite"))).pipe(Effect.map(Context.get(SqlClient.SqlClient)))
    for (const statement of schema("boolean", "timestamptz")) yield* sql.unsafe(statement)
    const text = insertText((n) => `$${n}`)
    const perRow = yield* Effect.promise(() =>
      measure(() => Effect.runPromise(sql.withTransaction(sql.unsafe(text, batch() as Array<string>)).pipe(Effect.asVoid)))
    )
    report("PGlite (the gateway's client, commits synced)", perRow)
  })))
  Fs.rmSync(path, { recursive: true, force: true })
}

if (values.store === "sqlite") await sqlite()
else if (values.store === "pglite") await pglite()
else {
  console.log(`${batches} batches of ${rowsPerBatch} rows per round, ${rounds} rounds, Node ${process.versions.node}; one process per store`)
  console.log("| store | CPU µs/row, median (min–max) | RSS after, MB | peak RSS, MB |")
  console.log("|---|---|---|---|")
  for (const store of ["sqlite", "pglite"]) {
    process.stdout.write(
      execFileSync(process.execPath, [...process.execArgv, new URL(import.meta.url).pathname, "--store", store,
        "--batches", String(batches), "--rows", String(rowsPerBatch), "--rounds", String(rounds)], { encoding: "utf8" })
    )
  }
}
