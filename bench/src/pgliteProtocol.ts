// `pnpm --filter @switchyard/bench pglite-protocol [--statements N] [--rounds N]`
//
// The proof kept beside the PGlite client (apps/store-import/src/pglite/PgliteClient.ts): the same
// statements through three SqlClients on in-memory PGlite, interleaved round by round:
//   - hand-written: the gateway's client (named prepared statements, one Bind/Execute/Sync batch
//     per statement, rows read from the wire bytes: PgliteWire.ts);
//   - pglite-query: the same SqlClient shape over PGlite's own `query` (its maintained protocol
//     code: Parse/Describe/Bind/Describe/Execute/Sync, messages parsed by pg-protocol);
//   - sql-pg-socket: `@effect/sql-pg` (node-postgres) over `@electric-sql/pglite-socket`, PGlite
//     served on a 127.0.0.1 TCP port.
// It prints CPU µs and wall µs per statement for a key lookup (SELECT by primary key) and a
// counter upsert (INSERT … ON CONFLICT DO UPDATE … RETURNING), the two shapes of the hot path.
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Context, Effect, Layer, Redacted, Semaphore, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import type { SqlConnection } from "effect/sql"
import * as SqlError from "effect/sql/SqlError"
import { parseArgs } from "node:util"
import * as PgliteClient from "../../apps/store-import/src/pglite/PgliteClient.ts"

const { values } = parseArgs({
  options: { statements: { type: "string", default: "2000" }, rounds: { type: "string", default: "3" } },
  strict: true
})
const statements = Number(values.statements)
const rounds = Number(values.rounds)

const schema = [
  "CREATE TABLE keys (id text PRIMARY KEY, name text NOT NULL, workspace_id text NOT NULL, limit_nanos bigint, disabled boolean NOT NULL DEFAULT false, created_at timestamptz NOT NULL DEFAULT now())",
  "INSERT INTO keys (id, name, workspace_id, limit_nanos) SELECT 'k' || i, 'key ' || i, 'w1', 1000000 FROM generate_series(1, 200) i",
  "CREATE TABLE spend (key_id text NOT NULL, day date NOT NULL, nanos bigint NOT NULL, PRIMARY KEY (key_id, day))"
]
const lookup = "SELECT id, name, workspace_id, limit_nanos::text AS limit_nanos, disabled, created_at FROM keys WHERE id = $1"
const upsert =
  "INSERT INTO spend (key_id, day, nanos) VALUES ($1, $2::date, $3::bigint) ON CONFLICT (key_id, day) DO UPDATE SET nanos = spend.nanos + EXCLUDED.nanos RETURNING nanos::text"

/** A SqlClient whose connection runs every statement through PGlite's own `query`. */
const pgliteQueryClient = Effect.gen(function*() {
  const db = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const db = new PGlite({ postgresqlconf: ["shared_buffers=16MB"] })
      await db.waitReady
      return db
    }),
    (db) => Effect.promise(() => db.close())
  )
  const run = (sql: string, params: ReadonlyArray<unknown>, rowMode?: "array") =>
    Effect.tryPromise({
      try: () => db.query(sql, params as Array<unknown>, rowMode === undefined ? {} : { rowMode }).then((r) => r.rows),
      catch: (cause) => new SqlError.SqlError({ reason: new SqlError.UnknownError({ cause, message: String(cause), operation: "query" }) })
    })
  const connection: SqlConnection.Connection = {
    execute: (sql, params, transform) => transform ? Effect.map(run(sql, params), (rows) => transform(rows as Array<object>)) : run(sql, params),
    executeRaw: (sql, params) => run(sql, params),
    executeValues: (sql, params) => run(sql, params, "array") as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError.SqlError>,
    executeValuesUnprepared: (sql, params) => run(sql, params, "array") as Effect.Effect<ReadonlyArray<ReadonlyArray<unknown>>, SqlError.SqlError>,
    executeUnprepared: (sql, params, transform) =>
      params.length === 0
        ? Effect.tryPromise({ try: () => db.exec(sql).then((r) => r.at(-1)?.rows ?? []), catch: (cause) => new SqlError.SqlError({ reason: new SqlError.UnknownError({ cause, message: String(cause), operation: "exec" }) }) }).pipe(Effect.map((rows) => transform ? transform(rows as Array<object>) : rows))
        : run(sql, params),
    executeStream: (sql, params) => Stream.fromArrayEffect(run(sql, params) as Effect.Effect<Array<any>, SqlError.SqlError>)
  }
  return yield* SqlClient.make({
    ...SqlClient.makeSqliteAcquirers({ connection: Effect.succeed(connection), semaphore: Semaphore.makeUnsafe(1) }),
    driver: "pglite",
    compiler: PgClient.makeCompiler(),
    spanAttributes: [["db.system.name", "postgresql"]]
  })
})

/** `@effect/sql-pg` over `@electric-sql/pglite-socket` on a free 127.0.0.1 port. */
const socketClient = Layer.unwrap(Effect.gen(function*() {
  const db = yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const db = new PGlite({ postgresqlconf: ["shared_buffers=16MB"] })
      await db.waitReady
      return db
    }),
    (db) => Effect.promise(() => db.close())
  )
  const port = 20000 + Math.floor(Math.random() * 20000)
  yield* Effect.acquireRelease(
    Effect.promise(async () => {
      const server = new PGLiteSocketServer({ db: db as never, port, host: "127.0.0.1" })
      await server.start()
      return server
    }),
    (server) => Effect.promise(() => server.stop())
  )
  return PgClient.layer({ url: Redacted.make(`postgres://postgres@127.0.0.1:${port}/postgres`), maxConnections: 1 }) as Layer.Layer<SqlClient.SqlClient, unknown>
}))

const clients = {
  "hand-written": PgliteClient.layer(undefined) as Layer.Layer<SqlClient.SqlClient, unknown>,
  "pglite-query": Layer.effect(SqlClient.SqlClient, pgliteQueryClient).pipe(Layer.provide(Reactivity.layer)),
  "sql-pg-socket": socketClient
} as const
type Name = keyof typeof clients

interface Figures {
  readonly cpuUs: number
  readonly wallUs: number
}

/** Runs `statements` of one shape, one after another, and returns µs per statement. */
const measure = (sql: SqlClient.SqlClient, shape: "lookup" | "upsert", round: number) =>
  Effect.gen(function*() {
    const cpu = process.cpuUsage()
    const start = process.hrtime.bigint()
    for (let i = 0; i < statements; i++) {
      if (shape === "lookup") yield* sql.unsafe(lookup, [`k${(i % 200) + 1}`])
      else yield* sql.unsafe(upsert, [`k${(i % 200) + 1}`, `2026-11-${String((round % 28) + 1).padStart(2, "0")}`, "1000"])
    }
    const used = process.cpuUsage(cpu)
    return {
      cpuUs: (used.user + used.system) / statements,
      wallUs: Number(process.hrtime.bigint() - start) / 1000 / statements
    } satisfies Figures
  })

const program = Effect.gen(function*() {
  const names = Object.keys(clients) as Array<Name>
  const sqls = {} as Record<Name, SqlClient.SqlClient>
  for (const name of names) {
    const sql = yield* Layer.build(clients[name]).pipe(Effect.map(Context.get(SqlClient.SqlClient)))
    for (const statement of schema) yield* sql.unsafe(statement)
    // Warm-up: plans, V8 tier-up, the socket's connection.
    yield* measure(sql, "lookup", 0)
    yield* measure(sql, "upsert", 0)
    sqls[name] = sql
  }
  const results: Record<string, Array<Figures>> = {}
  for (let round = 0; round < rounds; round++) {
    for (const shape of ["lookup", "upsert"] as const) {
      for (const name of [...names.slice(round % names.length), ...names.slice(0, round % names.length)]) {
        const figures = yield* measure(sqls[name], shape, round + 1)
        const key = `${shape} ${name}`
        results[key] = [...(results[key] ?? []), figures]
      }
    }
  }
  const median = (xs: Array<number>) => xs.sort((a, b) => a - b)[xs.length >> 1]!
  console.log(`${statements} statements per run, ${rounds} rounds, Node ${process.versions.node}; medians over the rounds`)
  console.log("| statement | client | CPU µs/statement | wall µs/statement |")
  console.log("|---|---|---|---|")
  for (const [key, figures] of Object.entries(results)) {
    const [shape, name] = key.split(" ")
    console.log(`| ${shape} | ${name} | ${median(figures.map((f) => f.cpuUs)).toFixed(0)} | ${median(figures.map((f) => f.wallUs)).toFixed(0)} |`)
  }
})

await Effect.runPromise(Effect.scoped(program))
