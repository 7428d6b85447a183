import { Effect } from "effect"
import { SqlClient, type Statement } from "effect/sql"

/**
 * A SQLite store as a busy gateway leaves it, for the EXPLAIN QUERY PLAN tests: the shape, the
 * rows every such test seeds (workspaces, users, keys with limits, per-day and all-time key
 * counters, the ledger), a recorder of the statements sent, and the reading of a plan's full scans.
 */
export const workspaces = 200
export const keysPerWorkspace = 10
export const keys = workspaces * keysPerWorkspace
export const days = 60
export const ledgerRows = 200_000
export const t0 = Date.parse("2030-05-14T10:00:00Z")

/** `g(n)` from 0 to `n - 1`, for an `INSERT … SELECT … FROM g`. */
export const series = (n: number) => `WITH RECURSIVE g(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM g WHERE n < ${n - 1})`

/** Day `d` back from `t0` as the store writes days (`-infinity` for the all-time row, d = 0). */
export const day = (d: string) => `CASE WHEN ${d} = 0 THEN '-infinity' ELSE date(${t0 / 1000} - (${d} - 1) * 86400, 'unixepoch') END`

/** The rows every plan test needs; run inside the caller's transaction, before its own. */
export const seedCore = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`${series(workspaces)} INSERT INTO workspaces (id, slug, name) SELECT 'ws-' || n, 'ws-' || n, 'W' FROM g`)
  yield* sql.unsafe(`${series(workspaces)} INSERT INTO users (id, name, default_workspace_id) SELECT 'user-' || n, 'U', 'ws-' || n FROM g`)
  yield* sql.unsafe(`${series(keys)} INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, limit_nanos, limit_reset)
    SELECT 'key-' || n, 'hash-' || n, 'standard', 'k', 'sk-sy-v1-...', 'user-' || (n / ${keysPerWorkspace}),
      'ws-' || (n / ${keysPerWorkspace}), 1000000000000000, CASE WHEN n % 2 = 0 THEN 'daily' END FROM g`)
  yield* sql.unsafe(`WITH RECURSIVE k(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM k WHERE n < ${keys - 1}),
      d(n) AS (SELECT 0 UNION ALL SELECT n + 1 FROM d WHERE n < ${days})
    INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos) SELECT 'key-' || k.n, ${day("d.n")}, 1000, 0 FROM k, d`)
  yield* sql.unsafe(`${series(ledgerRows)} INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens,
      total_tokens, cost_nanos, is_byok, created_at, latency_ms)
    SELECT 'gen-' || n, 'key-' || (n % ${keys}), 'ws-' || ((n % ${keys}) / ${keysPerWorkspace}), 'test/embed', 'test', 10, 10, 1000, 0,
      ${t0} - (n % (${days} * 86400)) * 1000, 5 FROM g`)
})

/** The statements sent through a context with `transformer`, with their parameters. */
export const recorder = () => {
  const sent: Array<readonly [string, ReadonlyArray<unknown>]> = []
  const transformer: Statement.Transformer = (self) => {
    sent.push(self.compile())
    return Effect.succeed(self)
  }
  return { sent, transformer }
}

/** The `large` tables a statement's plan reads whole (`SCAN t` or `SCAN alias`, covering index or not). */
export const fullScans = (large: ReadonlyArray<string>) => (text: string, plan: ReadonlyArray<{ readonly detail: string }>) => {
  const aliases = new Map<string, string>(large.map((t) => [t, t]))
  for (const m of text.matchAll(/\b(\w+)\s+(?:AS\s+)?(\w+)\b/giu)) {
    if (large.includes(m[1]!)) aliases.set(m[2]!, m[1]!)
  }
  return plan.flatMap((step) => {
    const scanned = /^SCAN (\w+)/u.exec(step.detail)?.[1]
    return scanned !== undefined && aliases.has(scanned) ? [`${aliases.get(scanned)}: ${step.detail}`] : []
  })
}
