/**
 * Measures the longest pause the store upkeep makes requests wait on PGlite, where every statement
 * runs in the gateway's thread and holds its one connection. A ledger of N rows (default one
 * million) is written to a PGlite data directory in one go, never vacuumed, as a store from a
 * version without upkeep is; then, while a stream of cheap statements runs every 10 ms through the
 * same client, the upkeep's start catch-up, its steps until none is due, rounds of 20,000 new rows
 * and of 20,000 pruned rows each followed by the steps they call for. A measuring script, not a test:
 *
 *   pnpm --filter @switchyard/server exec node test/support/UpkeepPauses.ts [rows, default 1000000]
 *
 * Figures are printed, not checked; docs/decisions.md ("Steady as the ledger grows") records them.
 */
import { Effect, Fiber, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { migrate } from "../../src/store/Migrations.ts"
import * as PgliteClient from "../../src/store/PgliteClient.ts"
import * as StoreUpkeep from "../../src/store/StoreUpkeep.ts"
import { freshPgliteDir } from "./TestServer.ts"

const rows = Number(process.argv[2] ?? 1_000_000)
const round = 20_000

const program = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let written = 0
  /** Ledger rows as the gateway writes them, ids and times in order. */
  const write = (n: number, perStatement: number) =>
    Effect.gen(function*() {
      for (let done = 0; done < n; done += perStatement) {
        const from = written + 1
        written += Math.min(perStatement, n - done)
        yield* sql`INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens,
            cost_nanos, is_byok, created_at, latency_ms)
          SELECT 'gen-emb-' || to_hex(1700000000000 + g * 3) || '-' || substr(md5(g::text), 1, 12), 'key-' || (g % 100),
              'ws-' || (g % 10), 'openai/text-embedding-3-small', 'openai', 12, 12, 240, false,
              timestamptz '2026-01-01' + make_interval(secs => g * 0.003), 41
            FROM generate_series(${from}::int, ${written}::int) g`
      }
    })
  yield* sql`INSERT INTO workspaces (id, slug, name) SELECT 'ws-' || g, 'ws-' || g, 'W' FROM generate_series(0, 9) g`
  yield* sql`INSERT INTO users (id, name, default_workspace_id) VALUES ('u', 'U', 'ws-0')`
  yield* sql`INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
    SELECT 'key-' || g, 'hash-' || g, 'standard', 'k', 'sk-sy-v1-...', 'u', 'ws-' || (g % 10) FROM generate_series(0, 99) g`
  const seeded = performance.now()
  yield* write(rows, 100_000)
  yield* sql`CHECKPOINT`
  console.log(`seeded ${rows} ledger rows in ${((performance.now() - seeded) / 1000).toFixed(0)} s`)

  // The stream of requests: the longest wait of one beyond its 10 ms spacing.
  let longest = 0
  let last = performance.now()
  const stream = yield* Effect.forever(Effect.gen(function*() {
    yield* Effect.sleep("10 millis")
    yield* sql`SELECT cost_nanos FROM ledger WHERE generation_id = 'gen-emb-0-x'`
    const now = performance.now()
    longest = Math.max(longest, now - last - 10)
    last = now
  })).pipe(Effect.forkChild)

  const measured = (label: string, work: Effect.Effect<ReadonlyArray<StoreUpkeep.Done>, unknown>) =>
    Effect.gen(function*() {
      yield* Effect.sleep("100 millis")
      longest = 0
      const cpu = process.cpuUsage()
      const done = yield* work
      yield* Effect.sleep("100 millis")
      const used = process.cpuUsage(cpu)
      const steps = done.map((d) => `${d.statement} ${d.table} ${d.millis.toFixed(0)} ms`).join(", ")
      console.log(`${label}: ${steps || "nothing due"}; cpu ${((used.user + used.system) / 1000).toFixed(0)} ms; ` +
        `longest pause of the stream ${longest.toFixed(0)} ms`)
      return done
    })
  /** The steps the upkeep would run, one at a time with 200 ms between them (5 s in the gateway), until none is due. */
  const untilDone = Effect.gen(function*() {
    const all: Array<StoreUpkeep.Done> = []
    for (;;) {
      const done = yield* StoreUpkeep.next(sql)
      if (done.length === 0) return all
      all.push(...done)
      yield* Effect.sleep("200 millis")
    }
  })

  yield* measured("catch-up (at start, before serving)", StoreUpkeep.catchUp(sql))
  yield* measured("first steps", untilDone)
  for (let i = 1; i <= 5; i++) {
    yield* write(round, 256)
    yield* measured(`after ${round} rows more (${written} written)`, untilDone)
  }
  for (let i = 1; i <= 4; i++) {
    for (let pruned = 0; pruned < round; pruned += 1_000) {
      yield* sql`DELETE FROM ledger WHERE generation_id IN (SELECT generation_id FROM ledger ORDER BY created_at LIMIT 1000)`
    }
    yield* measured(`after ${round} rows pruned`, untilDone)
  }
  yield* Fiber.interrupt(stream)
})

const main = async () => {
  const dir = await freshPgliteDir("upkeep-pauses")
  const sqlLayer = Layer.effectDiscard(migrate).pipe(Layer.provideMerge(PgliteClient.layer(dir)))
  await Effect.runPromise(program.pipe(Effect.provide(sqlLayer), Effect.scoped))
}

await main()
