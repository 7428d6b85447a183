import { PgClient } from "@effect/sql-pg"
import { Clock, Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as SqliteClient from "../../apps/server/src/store/sqlite/SqliteClient.ts"

/**
 * A ledger of many rows written into a migrated Switchyard store, set-based (one `generate_series`
 * statement per table), as a gateway that served that many requests would have left it: ledger
 * rows spread over the last days, the per-day and all-time spend counters of every key and
 * workspace that match them (`key_spend`, `workspace_spend`, the workspaces' usage), and some holds,
 * live and expired. A share of the rows belongs to the benchmark's own key (the store's first
 * standard key), the rest to filler keys in its workspace and in filler workspaces, so that its
 * queries run on a table of realistic size and spread.
 *
 * Two statement sets, one per dialect: PostgreSQL's writes the ledger with one `generate_series`
 * statement and its counters in the same statement; SQLite's (the gateway's embedded store, in the
 * baseline's types: epoch-millisecond times, 0/1 booleans, `YYYY-MM-DD` days with `-infinity` for
 * all time) counts with a recursive CTE and sums the counters from the seeded rows after them.
 *
 * The store is not analysed afterwards: keeping its statistics current is the gateway's upkeep, which
 * is what a soak measures.
 */
export interface SeedOptions {
  readonly rows: number
  /** Filler keys besides the benchmark's own (default 200). */
  readonly fillerKeys?: number
  /** Filler workspaces the filler keys are spread over, besides the benchmark's (default 20). */
  readonly fillerWorkspaces?: number
  /** How many days back the rows go, spread evenly (default 7). */
  readonly days?: number
}

/** The benchmark's key: the store's first standard key, its workspace and user. */
export interface Target {
  readonly keyId: string
  readonly workspaceId: string
  readonly userId: string
}

/** What a seed wrote and how long it took. */
export interface Seeded {
  readonly rows: number
  readonly benchKeyRows: number
  readonly holds: number
  readonly keys: number
  readonly workspaces: number
  readonly milliseconds: number
  /** CPU milliseconds this process used meanwhile: the whole seed's on SQLite (it runs in-process). */
  readonly cpuMs: number
  /**
   * Milliseconds of each statement, in order (workspaces, accounts, keys, ledger with its counters and
   * usage, holds; on SQLite the counters, usage and the holds' fence each a statement of their own).
   */
  readonly statementMs: ReadonlyArray<number>
  /** The ledger's size on disk (table and indexes; TOAST on PostgreSQL) after the seed, in bytes. */
  readonly ledgerBytes: number
}

/** Every seeded id starts with this, so seeded rows are told apart from served ones. */
const prefix = "bench-seed"

/** Slots of the key draw taken by the benchmark's own key, per filler key (one each). */
const benchSlots = 50

const literal = (text: string): string => `'${text.replaceAll("'", "''")}'`

const arrayOf = (items: ReadonlyArray<string>): string => `ARRAY[${items.map(literal).join(", ")}]::text[]`

/** The draw's slots as a table `s(slot, key_id, workspace_id)`, slots numbered from 0. */
const slotTable = (keyIds: ReadonlyArray<string>, workspaceIds: ReadonlyArray<string>): string =>
  `(SELECT (n - 1)::int AS slot, k AS key_id, w AS workspace_id
      FROM unnest(${arrayOf(keyIds)}, ${arrayOf(workspaceIds)}) WITH ORDINALITY AS t(k, w, n)) AS s`

/** What both dialects' statements draw from: the filler workspaces and keys and the key draw's slots. */
const plan = (options: SeedOptions, target: Target) => {
  const rows = Math.floor(options.rows)
  const fillerKeys = options.fillerKeys ?? 200
  const fillerWorkspaces = Math.max(1, options.fillerWorkspaces ?? 20)
  const days = options.days ?? 7
  if (!(rows >= 1) || !(fillerKeys >= 1) || !(days > 0)) throw new Error("a seed needs at least one row, one filler key and a positive span of days")
  const workspaceIds = Array.from({ length: fillerWorkspaces }, (_, i) => `${prefix}-ws-${i + 1}`)
  // A quarter of the filler keys live in the benchmark's workspace, the rest in the filler ones.
  const keys = Array.from({ length: fillerKeys }, (_, i) => ({
    id: `${prefix}-key-${i + 1}`,
    workspace: i % 4 === 0 ? target.workspaceId : workspaceIds[i % fillerWorkspaces]!
  }))
  const slotKeys = [...Array.from({ length: benchSlots }, () => target.keyId), ...keys.map((k) => k.id)]
  const slotWorkspaces = [...Array.from({ length: benchSlots }, () => target.workspaceId), ...keys.map((k) => k.workspace)]
  return {
    rows,
    fillerKeys,
    workspaceIds,
    keys,
    slotKeys,
    slotWorkspaces,
    slots: slotKeys.length,
    holds: Math.max(10, Math.floor(rows / 1000)),
    spanSeconds: Math.round(days * 86_400)
  }
}

/** The statements of a seed on PostgreSQL, in order; `target` is the benchmark's key as the store holds it. */
export const statements = (options: SeedOptions, target: Target): ReadonlyArray<string> => {
  const { holds, keys, rows, slotKeys, slotWorkspaces, slots, spanSeconds, workspaceIds, fillerKeys } = plan(options, target)
  const spendOf = (column: "key_id" | "workspace_id", table: "key_spend" | "workspace_spend") =>
    `INSERT INTO ${table} AS s (${column}, day, spent_nanos, byok_nanos)
        SELECT c.${column}, c.day, SUM(CASE WHEN c.is_byok THEN 0 ELSE c.cost_nanos END), SUM(CASE WHEN c.is_byok THEN c.cost_nanos ELSE 0 END)
          FROM charged c GROUP BY c.${column}, c.day
        ON CONFLICT (${column}, day) DO UPDATE
          SET spent_nanos = s.spent_nanos + EXCLUDED.spent_nanos, byok_nanos = s.byok_nanos + EXCLUDED.byok_nanos
        RETURNING 1`
  return [
    `INSERT INTO workspaces (id, slug, name)
      SELECT w, w, 'Seeded workspace ' || n FROM unnest(${arrayOf(workspaceIds)}) WITH ORDINALITY AS t(w, n)`,
    `INSERT INTO credit_accounts (workspace_id, credits_nanos, usage_nanos)
      SELECT w, 1000000000000000, 0 FROM unnest(${arrayOf(workspaceIds)}) AS t(w)`,
    `INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id)
      SELECT k, ${literal(`${prefix}-hash-`)} || n, 'standard', 'Seeded key ' || n, 'sk-sy-v1-see...' || n, ${literal(target.userId)}, w
        FROM unnest(${arrayOf(keys.map((k) => k.id))}, ${arrayOf(keys.map((k) => k.workspace))}) WITH ORDINALITY AS t(k, w, n)`,
    // One row per request: ids in order (as a clock-prefixed id grows), times spread evenly up to
    // now; the counters and usage from the rows written, in the same statement (as switchyard_flush
    // does), so the ledger is read once.
    `WITH written AS (
        INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
            is_byok, created_at, latency_ms, cached_items, cached_tokens)
          SELECT ${literal(`gen-${prefix}-`)} || lpad(g::text, 12, '0'), s.key_id, s.workspace_id,
              'bench/text-embedding-3-small', 'bench-upstream', 24 + g % 9, 24 + g % 9, (24 + g % 9) * 20,
              g % 50 = 0, now() - make_interval(secs => ${spanSeconds}::double precision * (${rows} - g) / ${rows} + 1), 2 + g % 17,
              CASE WHEN g % 20 = 0 THEN 1 ELSE 0 END, CASE WHEN g % 20 = 0 THEN 24 + g % 9 ELSE 0 END
            FROM generate_series(1, ${rows}) AS g
              JOIN ${slotTable(slotKeys, slotWorkspaces)} ON s.slot = g % ${slots}
            ORDER BY g
          RETURNING key_id, workspace_id, cost_nanos, is_byok, created_at
      ), charged AS (
        SELECT w.key_id, w.workspace_id, w.cost_nanos, w.is_byok, d.day FROM written w
          CROSS JOIN LATERAL (VALUES ((w.created_at AT TIME ZONE 'UTC')::date), ('-infinity'::date)) AS d(day)
          WHERE w.cost_nanos > 0
      ), key_days AS (${spendOf("key_id", "key_spend")}
      ), workspace_days AS (${spendOf("workspace_id", "workspace_spend")}
      ), usage AS (
        UPDATE credit_accounts a SET usage_nanos = a.usage_nanos + u.total, updated_at = now()
          FROM (SELECT workspace_id, SUM(cost_nanos) AS total FROM written WHERE NOT is_byok GROUP BY workspace_id) u
          WHERE a.workspace_id = u.workspace_id
          RETURNING 1
      )
      SELECT (SELECT count(*) FROM written) AS rows, (SELECT count(*) FROM key_days) AS key_days,
        (SELECT count(*) FROM workspace_days) AS workspace_days, (SELECT count(*) FROM usage) AS accounts`,
    // Holds of the filler keys: every other one expired (left for the upkeep), the rest live for a day.
    `INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at)
      SELECT ${literal(`${prefix}-hold-`)} || g, s.key_id, s.workspace_id, 1000 + g % 1000, false,
          now() - interval '1 hour', CASE WHEN g % 2 = 0 THEN now() - interval '10 minutes' ELSE now() + interval '1 day' END
        FROM generate_series(1, ${holds}) AS g
          JOIN ${slotTable(keys.map((k) => k.id), keys.map((k) => k.workspace))} ON s.slot = g % ${fillerKeys}`
  ]
}

/** A `VALUES` table of literal rows. */
const valuesOf = (rows: ReadonlyArray<ReadonlyArray<string | number>>): string =>
  rows.map((row) => `(${row.map((v) => typeof v === "number" ? String(v) : literal(v)).join(", ")})`).join(",\n        ")

/** The seeded ledger rows, by their ids' range (the primary key's index finds them). */
const seededLedger = `generation_id BETWEEN ${literal(`gen-${prefix}-`)} AND ${literal(`gen-${prefix}-~`)}`

/**
 * The statements of a seed on SQLite, in order, with `nowMs` as the present; the same rows as
 * {@link statements} writes on PostgreSQL.
 */
export const sqliteStatements = (options: SeedOptions, target: Target, nowMs: number): ReadonlyArray<string> => {
  const { holds, keys, rows, slotKeys, slotWorkspaces, slots, spanSeconds, workspaceIds, fillerKeys } = plan(options, target)
  const spanMs = spanSeconds * 1000
  const series = (n: number) => `g(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM g WHERE n < ${n})`
  const slotCte = (ks: ReadonlyArray<string>, ws: ReadonlyArray<string>) =>
    `s(slot, key_id, workspace_id) AS (VALUES ${valuesOf(ks.map((k, i) => [i, k, ws[i]!]))})`
  // Per day (UTC) and all time, from the seeded rows that cost something, added to what is there.
  const spendOf = (column: "key_id" | "workspace_id", table: "key_spend" | "workspace_spend") =>
    `INSERT INTO ${table} (${column}, day, spent_nanos, byok_nanos)
      SELECT c.${column}, c.day, SUM(CASE WHEN c.is_byok = 1 THEN 0 ELSE c.cost_nanos END), SUM(CASE WHEN c.is_byok = 1 THEN c.cost_nanos ELSE 0 END)
        FROM (SELECT ${column}, date(created_at / 1000, 'unixepoch') AS day, cost_nanos, is_byok FROM ledger WHERE ${seededLedger} AND cost_nanos > 0
          UNION ALL
          SELECT ${column}, '-infinity', cost_nanos, is_byok FROM ledger WHERE ${seededLedger} AND cost_nanos > 0) AS c
        WHERE true
        GROUP BY c.${column}, c.day
      ON CONFLICT (${column}, day) DO UPDATE
        SET spent_nanos = spent_nanos + excluded.spent_nanos, byok_nanos = byok_nanos + excluded.byok_nanos`
  return [
    `INSERT INTO workspaces (id, slug, name, created_at) VALUES ${valuesOf(workspaceIds.map((w, i) => [w, w, `Seeded workspace ${i + 1}`, nowMs]))}`,
    `INSERT INTO credit_accounts (workspace_id, credits_nanos, usage_nanos) VALUES ${valuesOf(workspaceIds.map((w) => [w, 1_000_000_000_000_000, 0]))}`,
    `INSERT INTO api_keys (id, hash, kind, name, label, user_id, workspace_id, created_at) VALUES ${
      valuesOf(keys.map((k, i) => [k.id, `${prefix}-hash-${i + 1}`, "standard", `Seeded key ${i + 1}`, `sk-sy-v1-see...${i + 1}`, target.userId, k.workspace, nowMs]))
    }`,
    // One row per request: ids in order (as a clock-prefixed id grows), times spread evenly up to now.
    `WITH RECURSIVE ${series(rows)}, ${slotCte(slotKeys, slotWorkspaces)}
      INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
          is_byok, created_at, latency_ms, cached_items, cached_tokens)
        SELECT printf('gen-${prefix}-%012d', g.n), s.key_id, s.workspace_id,
            'bench/text-embedding-3-small', 'bench-upstream', 24 + g.n % 9, 24 + g.n % 9, (24 + g.n % 9) * 20,
            CASE WHEN g.n % 50 = 0 THEN 1 ELSE 0 END, ${nowMs} - ${spanMs} * (${rows} - g.n) / ${rows} - 1000, 2 + g.n % 17,
            CASE WHEN g.n % 20 = 0 THEN 1 ELSE 0 END, CASE WHEN g.n % 20 = 0 THEN 24 + g.n % 9 ELSE 0 END
          FROM g JOIN s ON s.slot = g.n % ${slots}
          ORDER BY g.n`,
    spendOf("key_id", "key_spend"),
    spendOf("workspace_id", "workspace_spend"),
    `UPDATE credit_accounts AS a SET usage_nanos = a.usage_nanos + u.total, updated_at = ${nowMs}
      FROM (SELECT workspace_id, SUM(cost_nanos) AS total FROM ledger WHERE ${seededLedger} AND is_byok = 0 GROUP BY workspace_id) AS u
      WHERE a.workspace_id = u.workspace_id`,
    // Holds of the filler keys: every other one expired (left for the upkeep), the rest live for a
    // day; their fencing tokens the next values of the store's counter, which moves past them.
    `WITH RECURSIVE ${series(holds)}, ${slotCte(keys.map((k) => k.id), keys.map((k) => k.workspace))}
      INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, fence)
        SELECT ${literal(`${prefix}-hold-`)} || g.n, s.key_id, s.workspace_id, 1000 + g.n % 1000, 0,
            ${nowMs - 3_600_000}, CASE WHEN g.n % 2 = 0 THEN ${nowMs - 600_000} ELSE ${nowMs + 86_400_000} END,
            (SELECT value FROM holds_fence) + g.n
          FROM g JOIN s ON s.slot = g.n % ${fillerKeys}`,
    `UPDATE holds_fence SET value = value + ${holds}`
  ]
}

/** How many of `rows` seeded rows belong to the benchmark's key (the draw gives it `benchSlots` slots). */
export const benchKeyRows = (rows: number, fillerKeys = 200): number => {
  const slots = benchSlots + fillerKeys
  let n = 0
  for (let slot = 0; slot < benchSlots; slot++) {
    // g in 1..rows with (g % slots) === slot
    const first = slot === 0 ? slots : slot
    if (first <= rows) n += Math.floor((rows - first) / slots) + 1
  }
  return n
}

const findTarget = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const found = yield* sql<{ id: string; workspace_id: string; user_id: string }>`
      SELECT id, workspace_id, user_id FROM api_keys
        WHERE kind = 'standard' AND id NOT LIKE ${`${prefix}-%`} ORDER BY seq LIMIT 1`
    const row = found[0]
    if (row === undefined) return yield* Effect.fail(new Error("the store has no standard key to seed a ledger for: start the gateway on it first"))
    return { keyId: row.id, workspaceId: row.workspace_id, userId: row.user_id } satisfies Target
  })

/** Seeds the store `sql` reaches (one transaction), timing it. */
export const seedWith = (options: SeedOptions) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const started = performance.now()
    const cpuBefore = process.cpuUsage()
    const nowMs = yield* Clock.currentTimeMillis
    const target = yield* findTarget(sql)
    const { setup, texts } = yield* sql.onDialectOrElse({
      sqlite: () => Effect.succeed({ setup: [] as ReadonlyArray<string>, texts: sqliteStatements(options, target, nowMs) }),
      orElse: () =>
        Effect.map(
          sql<{ yes: boolean }>`SELECT rolsuper AS yes FROM pg_roles WHERE rolname = current_user`,
          // The rows reference only keys and workspaces that exist (the seed's own and the store's):
          // a superuser skips the per-row foreign-key triggers, about 40 % of the ledger insert's CPU.
          (superuser) => ({ setup: superuser[0]?.yes === true ? ["SET LOCAL session_replication_role = replica"] : [], texts: statements(options, target) })
        )
    })
    const statementMs: Array<number> = []
    yield* sql.withTransaction(Effect.forEach([...setup, ...texts], (text) =>
      Effect.suspend(() => {
        const at = performance.now()
        return sql.unsafe(text).pipe(Effect.tap(() => Effect.sync(() => statementMs.push(performance.now() - at))))
      }), { discard: true }))
    const milliseconds = performance.now() - started
    const cpu = process.cpuUsage(cpuBefore)
    const size = yield* sql.onDialectOrElse({
      sqlite: () =>
        sql<{ bytes: unknown }>`SELECT CAST(SUM(pgsize) AS text) AS bytes FROM dbstat
          WHERE name IN (SELECT name FROM sqlite_schema WHERE tbl_name = 'ledger')`,
      orElse: () => sql<{ bytes: unknown }>`SELECT pg_total_relation_size('ledger')::text AS bytes`
    })
    const fillerKeys = options.fillerKeys ?? 200
    return {
      rows: options.rows,
      benchKeyRows: benchKeyRows(options.rows, fillerKeys),
      holds: Math.max(10, Math.floor(options.rows / 1000)),
      keys: fillerKeys,
      workspaces: options.fillerWorkspaces ?? 20,
      milliseconds,
      cpuMs: (cpu.user + cpu.system) / 1000,
      statementMs: statementMs.slice(setup.length),
      ledgerBytes: Number(size[0]?.bytes ?? 0)
    } satisfies Seeded
  })

/**
 * Seeds the gateway's SQLite file (`<data dir>/switchyard.db`) no process has open, through the
 * server's own client; its commit checkpoints the log into the file when the client closes.
 */
export const seedSqlite = (file: string, options: SeedOptions): Promise<Seeded> =>
  Effect.runPromise(seedWith(options).pipe(Effect.provide(SqliteClient.layer(file))))

/** Seeds the PostgreSQL database of `url`. */
export const seedPostgres = (url: string, options: SeedOptions): Promise<Seeded> =>
  Effect.runPromise(
    seedWith(options).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })))
  )
