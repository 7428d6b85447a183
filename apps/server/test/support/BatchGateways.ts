import { PgClient } from "@effect/sql-pg"
import { assert } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as NodePath from "node:path"
import OpenAI from "openai"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"
import { type BundleProcess, healthy, launch } from "./BundleProcess.ts"
import { freePort } from "./ServerProcess.ts"

/**
 * Built gateways (`node dist/main.mjs`) for the batch suites that kill one mid-batch: started on
 * the same keys, read with the `openai` SDK, killed with SIGKILL, and the store's ledger read back.
 */

export interface Gateway {
  readonly process: BundleProcess
  readonly origin: string
  readonly client: OpenAI
}

/**
 * Polls `read` every 25 ms until `done` holds, or fails after `timeoutMs` with the last value. A
 * read whose connection was cut (a worker process of the gateway killed under it) is read again.
 */
export const until = async <A>(read: () => Promise<A> | A, done: (a: A) => boolean, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await Promise.resolve().then(read).then((a) => ({ a }), (error: unknown) => {
      if (error instanceof Error && error.message === "Connection error." && Date.now() <= deadline) return undefined
      throw error
    })
    if (value !== undefined && done(value.a)) return value.a
    if (Date.now() > deadline) throw new Error(`not done within ${timeoutMs} ms: ${JSON.stringify(value?.a)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

/** A JSONL input of `lines` embeddings lines of `acme/embed`, custom ids `${prefix}0`… */
export const batchInput = (lines: number, prefix: string): string =>
  Array.from({ length: lines }, (_, i) =>
    JSON.stringify({ custom_id: `${prefix}${i}`, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: `line ${i} of the batch` } }))
    .join("\n")

/** Gateways on one pair of first-start keys; `killAll` ends whatever a failed test left running. */
export const gateways = (baseEnv: Record<string, string>) => {
  const apiKey = KeySecret.generate()
  const managementKey = KeySecret.generate()
  const started: Array<BundleProcess> = []
  const start = async (env: Record<string, string>): Promise<Gateway> => {
    const port = await freePort()
    const gateway = launch({
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
      SWITCHYARD_RATE_LIMIT: "off",
      SWITCHYARD_LOG_LEVEL: "warn",
      ALPHA_API_KEY: "sk-fake",
      SWITCHYARD_BATCH_POLL_MS: "100",
      SWITCHYARD_BATCH_UNIT_LINES: "64",
      ...baseEnv,
      ...env
    })
    started.push(gateway)
    const origin = `http://127.0.0.1:${port}`
    await healthy(gateway, origin, 120_000)
    return { process: gateway, origin, client: new OpenAI({ apiKey, baseURL: `${origin}/api/v1`, maxRetries: 0 }) }
  }
  const killAll = () => {
    for (const gateway of started) if (gateway.isRunning()) gateway.child.kill("SIGKILL")
  }
  /** Credits for the workspace, so that every line is paid for. */
  const topUp = async (gateway: Gateway) => {
    const answer = await fetch(`${gateway.origin}/api/v1/credits`, {
      method: "POST",
      headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
      body: JSON.stringify({ amount: 1000 })
    })
    assert.strictEqual(answer.status, 200)
  }
  /** The sum of `/activity`'s costs, in nano-dollars. */
  const activity = async (gateway: Gateway, nanosOf: (usage: number) => bigint) => {
    const answer = await fetch(`${gateway.origin}/api/v1/activity`, { headers: { authorization: `Bearer ${managementKey}` } })
    return ((await answer.json()) as { data: Array<{ usage: number }> }).data.reduce((n, item) => n + nanosOf(item.usage), 0n)
  }
  return { start, killAll, topUp, activity }
}

export const kill = async (gateway: Gateway) => {
  gateway.process.child.kill("SIGKILL")
  const exit = await gateway.process.exited
  assert.strictEqual(exit.signal, "SIGKILL")
}

export interface Books {
  readonly rows: number
  readonly distinct: number
  readonly nanos: bigint
}

const readBooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ n: number | string; d: number | string; nanos: string | null }>`SELECT COUNT(*) AS n,
    COUNT(DISTINCT generation_id) AS d, CAST(SUM(cost_nanos) AS text) AS nanos FROM ledger`
  return { rows: Number(rows[0]!.n), distinct: Number(rows[0]!.d), nanos: BigInt(rows[0]!.nanos ?? "0") } satisfies Books
})

/** The ledger's rows, distinct generations and sum, read from an embedded store's data directory. */
export const booksOnSqlite = (dataDir: string): Promise<Books> =>
  Effect.runPromise(readBooks.pipe(Effect.provide(SqliteClient.layer(NodePath.join(dataDir, "switchyard.db")))) as Effect.Effect<Books, unknown, never>)

/** The same, read from a PostgreSQL database. */
export const booksOnPostgres = (databaseUrl: string): Promise<Books> =>
  Effect.runPromise(
    readBooks.pipe(Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 }))) as Effect.Effect<Books, unknown, never>
  )

/** A batch's units (by whom each was claimed last) and the gateway processes the store sees alive. */
export interface Claims {
  readonly units: ReadonlyArray<{ readonly seq: number; readonly status: string; readonly owner: string | null }>
  readonly running: ReadonlyArray<{ readonly seq: number; readonly owner: string | null }>
  readonly processes: ReadonlyArray<string>
}

const readClaims = (batchId: string, aliveSince: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<{ id: string }>, unknown>) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const units = (yield* sql<{ seq: number; status: string; claimed_by: string | null }>`SELECT seq, status, claimed_by
      FROM batch_units WHERE batch_id = ${batchId} ORDER BY seq`).map((u) => ({ seq: Number(u.seq), status: u.status, owner: u.claimed_by }))
    return {
      units,
      running: units.filter((u) => u.status === "running").map(({ owner, seq }) => ({ seq, owner })),
      processes: (yield* aliveSince(sql)).map((p) => p.id)
    } satisfies Claims
  })

// Alive: seen within the last 30 s (GatewayProcesses' default stale time).
/** The claims of a batch on an embedded store's data directory. */
export const claimsOnSqlite = (dataDir: string, batchId: string): Promise<Claims> =>
  Effect.runPromise(
    readClaims(batchId, (sql) => sql<{ id: string }>`SELECT id FROM gateway_processes WHERE seen_at >= ${Date.now() - 30_000}`).pipe(
      Effect.provide(SqliteClient.layer(NodePath.join(dataDir, "switchyard.db")))
    ) as Effect.Effect<Claims, unknown, never>
  )

/** The same, on a PostgreSQL database. */
export const claimsOnPostgres = (databaseUrl: string, batchId: string): Promise<Claims> =>
  Effect.runPromise(
    readClaims(batchId, (sql) => sql<{ id: string }>`SELECT id FROM gateway_processes WHERE seen_at >= now() - interval '30 seconds'`).pipe(
      Effect.provide(PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 }))
    ) as Effect.Effect<Claims, unknown, never>
  )
