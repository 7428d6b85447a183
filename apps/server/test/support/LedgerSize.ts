/**
 * Measures what the ledger costs on disk: bytes per ledger row (table and indexes) and the growth
 * of a PGlite data directory per million requests (rows written by `switchyard_flush` in batches,
 * as the gateway writes them), then how long pruning takes a batch and the plans of the pruning
 * and cache-eviction statements. A measuring script, not a test:
 *
 *   pnpm --filter @switchyard/server exec node test/support/LedgerSize.ts [rows, default 200000]
 *
 * Figures are printed, not checked; docs/decisions.md ("Ledger retention") records them.
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as GenerationId from "../../src/embeddings/GenerationId.ts"
import { defaultBatchRows, LedgerRetention } from "../../src/store/LedgerRetention.ts"
import { migrate } from "../../src/store/Migrations.ts"
import * as PgliteClient from "../../src/store/PgliteClient.ts"
import { freshPgliteDir } from "./TestServer.ts"

const rows = Number(process.argv[2] ?? 200_000)
const batch = 256
const batchRows = defaultBatchRows("pglite")

const dirBytes = (dir: string): number =>
  Fs.readdirSync(dir, { withFileTypes: true }).reduce(
    (n, e) => n + (e.isDirectory() ? dirBytes(NodePath.join(dir, e.name)) : Fs.statSync(NodePath.join(dir, e.name)).size),
    0
  )

const mb = (bytes: number) => (bytes / 1_048_576).toFixed(1)

const program = (dir: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const workspace = Crypto.randomUUID()
    const user = Crypto.randomUUID()
    const key = Crypto.randomUUID()
    yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${workspace}, 'measure', 'Measure')`
    yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES (${user}, 'measure', ${workspace})`
    yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
      VALUES (${key}, ${Crypto.randomBytes(32).toString("hex")}, 'standard', 'k', 'sk-sy-v1-...', ${user}, ${workspace})`
    yield* sql`CHECKPOINT`
    const sizeAtStart = dirBytes(dir)
    const walAtStart = dirBytes(NodePath.join(dir, "pg_wal"))
    const start = Date.now() - 10 * 86_400_000
    const started = Date.now()
    for (let written = 0; written < rows; written += batch) {
      const flush = Array.from({ length: Math.min(batch, rows - written) }, (_, i) => ({
        generation: `gen-emb-${(start + written + i).toString(36)}-${Crypto.randomBytes(9).toString("base64url")}`,
        key,
        workspace,
        model: "openai/text-embedding-3-small",
        provider: "openai",
        prompt_tokens: 12,
        total_tokens: 12,
        cost: "240",
        byok: false,
        created: new Date(start + (written + i) * 3).toISOString(),
        latency_ms: 41,
        cached_items: 0,
        cached_tokens: 0,
        lease: null
      }))
      yield* sql`SELECT count(*) FROM switchyard_flush(${JSON.stringify(flush)}::jsonb, now())`
    }
    const writeMs = Date.now() - started
    yield* sql`ANALYZE`
    yield* sql`CHECKPOINT`
    const [size] = yield* sql<{ total: string; heap: string; indexes: string; n: number }>`SELECT
        pg_total_relation_size('ledger')::text AS total, pg_relation_size('ledger')::text AS heap,
        pg_indexes_size('ledger')::text AS indexes, (SELECT count(*)::int FROM ledger) AS n`
    const grown = dirBytes(dir) - sizeAtStart
    const wal = dirBytes(NodePath.join(dir, "pg_wal"))
    console.log(`rows written: ${size!.n} in ${(writeMs / 1000).toFixed(1)} s (batches of ${batch})`)
    console.log(`ledger: ${(Number(size!.total) / size!.n).toFixed(0)} bytes/row in all (heap ${(Number(size!.heap) / size!.n).toFixed(0)}, indexes ${(Number(size!.indexes) / size!.n).toFixed(0)})`)
    console.log(`data directory: +${mb(grown)} MB after CHECKPOINT (of which WAL +${mb(wal - walAtStart)} MB), ` +
      `${mb(grown / size!.n * 1_000_000)} MB per million requests (${mb((grown - wal + walAtStart) / size!.n * 1_000_000)} MB without the WAL)`)

    const explain = (label: string, statement: string) =>
      Effect.gen(function*() {
        const plan = yield* sql.unsafe<{ "QUERY PLAN": string }>(`EXPLAIN ${statement}`)
        const lines = plan.map((r) => r["QUERY PLAN"])
        console.log(`plan of ${label}: ${lines.some((l) => /Seq Scan on (ledger|effect_persistence)/u.test(l)) ? "SEQUENTIAL SCAN" : "index only"}`)
        for (const line of lines) console.log(`  ${line}`)
      })
    yield* explain("the prune's batch choice", `SELECT d.generation_id FROM workspaces w CROSS JOIN LATERAL (
      SELECT l.generation_id FROM ledger l WHERE l.workspace_id = w.id AND l.created_at < now()
      ORDER BY l.created_at LIMIT 5000 FOR UPDATE SKIP LOCKED) d LIMIT 5000`)
    yield* sql`CREATE TABLE IF NOT EXISTS effect_persistence_embedding_cache (id TEXT PRIMARY KEY, value TEXT NOT NULL, expires BIGINT)`
    yield* sql`INSERT INTO effect_persistence_embedding_cache
      SELECT md5(g::text), repeat('x', 200), 1700000000000 + g FROM generate_series(1, 150000) g`
    yield* sql`ANALYZE effect_persistence_embedding_cache`
    yield* explain("the cache's expired batch", `DELETE FROM effect_persistence_embedding_cache WHERE id IN (
      SELECT id FROM effect_persistence_embedding_cache WHERE expires <= 1700000100000 ORDER BY expires, id LIMIT 1000)`)
    yield* explain("the cache's bound edge", `SELECT expires, id FROM effect_persistence_embedding_cache
      ORDER BY expires DESC, id DESC OFFSET 100000 LIMIT 1`)
    yield* explain("the cache's over-bound batch", `DELETE FROM effect_persistence_embedding_cache WHERE id IN (
      SELECT id FROM effect_persistence_embedding_cache WHERE (expires, id) <= (1700000050000::bigint, 'x') ORDER BY expires, id LIMIT 1000)`)

    // Every row is past a retention of -30 days: the prune takes them all, a batch a statement.
    const retention = yield* LedgerRetention
    const pruneStarted = Date.now()
    const pruned = yield* retention.prune
    const pruneMs = Date.now() - pruneStarted
    const batches = Math.ceil(pruned / batchRows)
    console.log(`pruned ${pruned} rows in ${batches} batches: ${((pruneMs - (batches - 1) * 100) / batches).toFixed(0)} ms a batch (pauses of 100 ms apart)`)
  })

const main = async () => {
  const dir = await freshPgliteDir("ledger-size")
  const sqlLayer = Layer.effectDiscard(migrate).pipe(Layer.provideMerge(PgliteClient.layer(dir)))
  // The id format the gateway writes (only checked here, so a change of format shows).
  if (GenerationId.timeOf(`gen-emb-${Date.now().toString(36)}-AAAAAAAAAAAA`) === undefined) throw new Error("generation id format")
  await Effect.runPromise(
    program(dir).pipe(
      Effect.provide(LedgerRetention.layerWith({ days: -30, interval: "1000 days" }).pipe(Layer.provideMerge(sqlLayer))),
      Effect.scoped
    )
  )
}

await main()
