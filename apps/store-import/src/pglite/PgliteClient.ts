// The PGlite client of the gateway before it moved to SQLite, kept here (with its wire protocol,
// durability, init and WebAssembly modules) for what still opens a PGlite store: the tests of the
// PGlite import, which build an old store with the gateway's migrations, and the bench's old-build
// target. The gateway itself no longer depends on PGlite.
import { PGlite } from "@electric-sql/pglite"
import { PgClient } from "@effect/sql-pg"
import { Effect, Layer, Semaphore, Stream } from "effect"
import type { Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import type { SqlConnection } from "effect/sql"
import * as SqlError from "effect/sql/SqlError"
import * as PgliteDurability from "./PgliteDurability.ts"
import * as PgliteInit from "./PgliteInit.ts"
import * as PgliteWasm from "./PgliteWasm.ts"
import * as PgliteWire from "./PgliteWire.ts"

const errorFrom = (operation: string) => (cause: unknown) => {
  const code = (cause as { code?: unknown } | null)?.code
  const props = { cause, message: cause instanceof Error ? cause.message : String(cause), operation }
  if (code === "23505") {
    const constraint = (cause as { constraint?: string }).constraint ?? ""
    return new SqlError.SqlError({ reason: new SqlError.UniqueViolation({ ...props, constraint }) })
  }
  if (typeof code === "string" && code.startsWith("23")) {
    return new SqlError.SqlError({ reason: new SqlError.ConstraintError(props) })
  }
  if (typeof code === "string" && code.startsWith("42")) {
    return new SqlError.SqlError({ reason: new SqlError.SqlSyntaxError(props) })
  }
  return new SqlError.SqlError({ reason: new SqlError.UnknownError(props) })
}

/** A statement prepared under a name: its parameter types and how to read its rows. */
interface Prepared {
  readonly name: string
  readonly parameterTypes: ReadonlyArray<number>
  readonly fields: ReadonlyArray<PgliteWire.Field>
}

/** What one batch of messages produced: the rows of the last result, and the first error. */
interface Answer {
  fields: ReadonlyArray<PgliteWire.Field>
  rows: Array<unknown>
  error: PgliteWire.DatabaseError | undefined
  transactionStatus: string
}

/** At most this many statements stay prepared; the least recently used are closed. */
const maxPrepared = 128

/**
 * Only data statements are kept prepared: schema changes and transaction control run once or are
 * not worth a plan.
 */
const worthPreparing = /^\s*(select|insert|update|delete|with)\b/i

/**
 * SQLSTATEs of a kept statement that went stale (a schema change altered its result type) or is
 * gone; it is prepared again once.
 */
const staleStatement = new Set(["0A000", "26000"])

/**
 * Runs statements on PGlite over the wire protocol in one batch each. PGlite's `query` makes six
 * separate calls into the backend for every statement (Parse, Describe, Bind, Describe, Execute,
 * Sync), re-parses and re-plans the SQL each time and builds message objects for every answer.
 * Here a data statement is prepared once under a name (its parameter types and row description
 * kept), and each later run is a single Bind/Execute/Sync batch whose answer is read straight from
 * the bytes; PostgreSQL's plan cache then settles on a generic plan, so the planner's per-query
 * work (including its file-size probes, `fstat` in PGlite's Node filesystem) stops too. Values
 * are serialised and parsed with PGlite's own per-type functions, so rows come back exactly as
 * from `query`.
 *
 * Kept over the maintained alternatives because it is several times cheaper per statement: the
 * proof is `bench/src/pgliteProtocol.ts` (`pnpm --filter @switchyard/bench pglite-protocol`), its
 * figures are in docs/decisions.md ("PGlite protocol").
 *
 * Callers run one statement at a time (the client's semaphore); that is what makes the shared
 * writer, collector and named statements safe. Durability is the connection's business (see
 * `Connection`); PGlite's own `syncToFs` is a no-op for its Node filesystem and is not called.
 */
class Session {
  private readonly pglite: PGlite
  private readonly writer = new PgliteWire.Writer()
  private readonly collector = new PgliteWire.Collector()
  /** Prepared statements by SQL text, least recently used first. */
  private readonly prepared = new Map<string, Prepared>()
  /** Names of evicted statements, closed with the next preparation. */
  private readonly closing: Array<string> = []
  private counter = 0

  constructor(pglite: PGlite) {
    this.pglite = pglite
  }

  private async send(batch: Uint8Array): Promise<PgliteWire.Reader> {
    await this.pglite.execProtocolRawStream(batch, { syncToFs: false, onRawData: this.collector.onRawData })
    return this.collector.take()
  }

  /** Reads a batch's answer; rows are parsed against `fields` unless a RowDescription comes. */
  private read(reader: PgliteWire.Reader, fields: ReadonlyArray<PgliteWire.Field>, arrays: boolean): Answer {
    const answer: Answer = { fields, rows: [], error: undefined, transactionStatus: "I" }
    let rows: Array<unknown> = []
    let parsers = this.parsersFor(fields)
    while (reader.advance()) {
      switch (reader.type) {
        case PgliteWire.Message.DataRow: {
          const values = reader.values()
          const current = answer.fields
          if (arrays) {
            const row = new Array<unknown>(values.length)
            for (let i = 0; i < values.length; i++) {
              const value = values[i]!
              const parser = parsers[i]
              row[i] = value === null ? null : parser === undefined ? value : parser(value, current[i]!.typeOid)
            }
            rows.push(row)
          } else {
            const row: Record<string, unknown> = {}
            for (let i = 0; i < values.length; i++) {
              const value = values[i]!
              const parser = parsers[i]
              row[current[i]!.name] = value === null ? null : parser === undefined ? value : parser(value, current[i]!.typeOid)
            }
            rows.push(row)
          }
          break
        }
        case PgliteWire.Message.RowDescription:
          answer.fields = reader.fields()
          parsers = this.parsersFor(answer.fields)
          break
        case PgliteWire.Message.CommandComplete:
          // The rows of the last result: a simple query can run several statements.
          answer.rows = rows
          rows = []
          break
        case PgliteWire.Message.ErrorResponse:
          answer.error ??= reader.error()
          break
        case PgliteWire.Message.ReadyForQuery:
          answer.transactionStatus = reader.transactionStatus()
          break
        default:
          break
      }
    }
    return answer
  }

  private parsersFor(fields: ReadonlyArray<PgliteWire.Field>) {
    const parsers = this.pglite.parsers
    return fields.map((field) => parsers[field.typeOid])
  }

  /** Text values for the parameters, as PGlite's `query` serialises them. */
  private serialise(parameterTypes: ReadonlyArray<number>, params: ReadonlyArray<unknown>): Array<string | null> {
    const serializers = this.pglite.serializers
    return params.map((param, i) => {
      if (param === null || param === undefined) return null
      const serializer = serializers[parameterTypes[i]!]
      return serializer !== undefined ? serializer(param) : String(param)
    })
  }

  /** Parse and Describe of `text` as statement `name`: its parameter types and columns. */
  private async describe(name: string, text: string): Promise<{ parameterTypes: Array<number>; fields: Array<PgliteWire.Field> }> {
    for (const stale of this.closing.splice(0)) this.writer.closeStatement(stale)
    const reader = await this.send(this.writer.parse(name, text).describeStatement(name).sync().flush())
    let parameterTypes: Array<number> = []
    let fields: Array<PgliteWire.Field> = []
    let error: PgliteWire.DatabaseError | undefined
    while (reader.advance()) {
      if (reader.type === PgliteWire.Message.ParameterDescription) parameterTypes = reader.parameterTypes()
      else if (reader.type === PgliteWire.Message.RowDescription) fields = reader.fields()
      else if (reader.type === PgliteWire.Message.ErrorResponse) error ??= reader.error()
    }
    if (error !== undefined) throw error
    return { parameterTypes, fields }
  }

  private async prepare(text: string): Promise<Prepared> {
    const name = `sy${++this.counter}`
    const statement = { name, ...(await this.describe(name, text)) }
    this.prepared.set(text, statement)
    if (this.prepared.size > maxPrepared) {
      const [oldest, evicted] = this.prepared.entries().next().value!
      this.prepared.delete(oldest)
      this.closing.push(evicted.name)
    }
    return statement
  }

  /**
   * Runs a statement with parameters; rows as objects, or as arrays when `arrays`. A data
   * statement is kept prepared unless `prepare` is false.
   */
  async run(text: string, params: ReadonlyArray<unknown>, arrays: boolean, prepare: boolean): Promise<Array<unknown>> {
    if (!prepare || !worthPreparing.test(text)) return this.runUnnamed(text, params, arrays)
    for (let attempt = 0;; attempt++) {
      let statement = this.prepared.get(text)
      if (statement === undefined) {
        statement = await this.prepare(text)
      } else {
        // Most recently used last.
        this.prepared.delete(text)
        this.prepared.set(text, statement)
      }
      const values = this.serialise(statement.parameterTypes, params)
      const answer = this.read(
        await this.send(this.writer.bind(statement.name, values).execute().sync().flush()),
        statement.fields,
        arrays
      )
      if (answer.error === undefined) return answer.rows
      if (staleStatement.has(answer.error.code ?? "") && this.prepared.get(text) === statement) {
        this.prepared.delete(text)
        this.closing.push(statement.name)
        // Outside a transaction nothing was lost: prepare it again once.
        if (attempt === 0 && answer.transactionStatus === "I") continue
      }
      throw answer.error
    }
  }

  /** Runs a statement through the unnamed statement, kept for nothing. */
  private async runUnnamed(text: string, params: ReadonlyArray<unknown>, arrays: boolean): Promise<Array<unknown>> {
    if (params.length === 0) {
      const reader = await this.send(this.writer.parse("", text).bind("", []).describePortal().execute().sync().flush())
      const answer = this.read(reader, [], arrays)
      if (answer.error !== undefined) throw answer.error
      return answer.rows
    }
    const { fields, parameterTypes } = await this.describe("", text)
    const values = this.serialise(parameterTypes, params)
    const answer = this.read(await this.send(this.writer.bind("", values).execute().sync().flush()), fields, arrays)
    if (answer.error !== undefined) throw answer.error
    return answer.rows
  }

  /** Runs one or more statements without parameters (simple query); the last one's rows. */
  async runScript(text: string): Promise<Array<unknown>> {
    const answer = this.read(await this.send(this.writer.query(text).flush()), [], false)
    if (answer.error !== undefined) throw answer.error
    return answer.rows
  }
}

/**
 * The one session seen as a `SqlConnection`. On a data directory, a statement's answer waits until
 * every commit so far is on disk (`PgliteDurability.flush`): inside the statement (`flushInside`,
 * for transactions, whose connection is leased for their whole length) or, for a single statement,
 * after its lease is returned (`borrower` in `make`), so the next statement runs while this one's
 * commit is flushed.
 */
class Connection implements SqlConnection.Connection {
  readonly pglite: PGlite
  private readonly session: Session
  private readonly durability: PgliteDurability.PgliteDurability | undefined
  private readonly flushInside: boolean
  constructor(pglite: PGlite, session: Session, durability: PgliteDurability.PgliteDurability | undefined, flushInside: boolean) {
    this.pglite = pglite
    this.session = session
    this.durability = durability
    this.flushInside = flushInside
  }
  private durable<A>(run: () => Promise<A>): () => Promise<A> {
    const durability = this.durability
    if (durability === undefined || !this.flushInside) return run
    return async () => {
      const result = await run()
      await durability.flush()
      return result
    }
  }
  private rows(operation: string, sql: string, params: ReadonlyArray<unknown>, prepare = true) {
    return Effect.tryPromise({
      try: this.durable(() => this.session.run(sql, params, false, prepare) as Promise<ReadonlyArray<Record<string, unknown>>>),
      catch: errorFrom(operation)
    })
  }
  private values(operation: string, sql: string, params: ReadonlyArray<unknown>, prepare = true) {
    return Effect.tryPromise({
      try: this.durable(() => this.session.run(sql, params, true, prepare) as Promise<ReadonlyArray<ReadonlyArray<unknown>>>),
      catch: errorFrom(operation)
    })
  }
  execute(sql: string, params: ReadonlyArray<unknown>, transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined) {
    const rows = this.rows("execute", sql, params)
    return transformRows ? Effect.map(rows, transformRows) : rows
  }
  executeRaw(sql: string, params: ReadonlyArray<unknown>) {
    return Effect.tryPromise({ try: this.durable(() => this.pglite.query(sql, params as Array<unknown>)), catch: errorFrom("executeRaw") })
  }
  executeValues(sql: string, params: ReadonlyArray<unknown>) {
    return this.values("executeValues", sql, params)
  }
  executeValuesUnprepared(sql: string, params: ReadonlyArray<unknown>) {
    return this.values("executeValuesUnprepared", sql, params, false)
  }
  executeUnprepared(sql: string, params: ReadonlyArray<unknown>, transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined) {
    const run = params.length === 0
      ? Effect.tryPromise({
        try: this.durable(() => this.session.runScript(sql) as Promise<ReadonlyArray<Record<string, unknown>>>),
        catch: errorFrom("executeUnprepared")
      })
      : this.rows("executeUnprepared", sql, params, false)
    return transformRows ? Effect.map(run, transformRows) : run
  }
  executeStream(sql: string, params: ReadonlyArray<unknown>, transformRows: (<A extends object>(rows: ReadonlyArray<A>) => ReadonlyArray<A>) | undefined) {
    return Stream.fromArrayEffect(this.execute(sql, params, transformRows))
  }
}

/** How the PGlite database is run. */
export interface PgliteOptions {
  /**
   * Keep PGlite's WebAssembly on V8's baseline code (no optimising tier-up). Measured on the
   * gateway: the process's high-water mark after starting on an existing database ~250 MB instead
   * of ~790 MB (the tier-up burst), ~90 MB less peak under load, ~50 % more CPU per request.
   */
  readonly baselineCode?: boolean
  /**
   * Commits are on disk before their answer is read (default `true`; `PgliteDurability`). `false`
   * is PGlite's own behaviour: a commit reaches the operating system but not the disk, so a power
   * loss can lose the last commits. Only a data directory has a disk to sync.
   */
  readonly fsync?: boolean
}

/**
 * A `SqlClient` over an in-process PGlite database. PGlite runs one statement at a time, so every
 * statement and every transaction leases the one connection (sql's single-connection acquirers); the SQL compiler is sql-pg's, so both
 * stores compile statements identically.
 */
const make = (
  dataDir: string | undefined,
  options: PgliteOptions = {}
): Effect.Effect<SqlClient.SqlClient, SqlError.SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const pglite = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          // initdb in a child process: its ~1 GB peak never enters this one (PgliteInit.ts).
          if (dataDir !== undefined) await PgliteInit.ensureDataDir(dataDir)
          // PGlite's default 128 MB of shared buffers is most of its memory; the gateway's working
          // set (keys, holds, recent ledger) is a few MB. 16 MB: about 110 MB less RSS.
          const durable = dataDir !== undefined && options.fsync !== false
          const settings = durable
            ? {
              postgresqlconf: ["shared_buffers=16MB", ...PgliteDurability.settings],
              startParams: PgliteDurability.startParams(PGlite.defaultStartParams)
            }
            : { postgresqlconf: ["shared_buffers=16MB"] }
          const open = async () => {
            const db = dataDir === undefined ? new PGlite(settings) : new PGlite(dataDir, settings)
            await db.waitReady
            return db
          }
          // Baseline WebAssembly code on request: less memory, more CPU (PgliteWasm.ts).
          const db = await (options.baselineCode === true ? PgliteWasm.withBaselineCode(open) : open())
          return { db, durability: durable ? PgliteDurability.PgliteDurability.install(db) : undefined }
        },
        catch: errorFrom("connect")
      }),
      ({ db }) => Effect.promise(() => db.close()).pipe(Effect.timeoutOption(5000), Effect.ignore)
    )
    const { db, durability } = pglite
    const session = new Session(db)
    const leased = new Connection(db, session, durability, true)
    const borrowed = new Connection(db, session, durability, false)
    const acquirers = SqlClient.makeSqliteAcquirers({ connection: Effect.succeed(leased), semaphore: Semaphore.makeUnsafe(1) })
    // A single statement holds the lease only while it runs; when it committed something, its
    // answer then waits for the disk outside the lease. A disk that cannot flush the log is a
    // defect of the store, not of the request.
    const borrower = durability === undefined
      ? acquirers.borrower
      : <A, E, R>(f: (connection: SqlConnection.Connection) => Effect.Effect<A, E, R>): Effect.Effect<A, E | SqlError.SqlError, R> =>
        Effect.gen(function*() {
          const noWait = yield* PgliteDurability.NoDiskWait
          let before = 0
          const result = yield* acquirers.borrower(() =>
            Effect.suspend(() => {
              before = durability.commits
              return f(borrowed)
            })
          )
          if (!noWait && durability.commits !== before) yield* Effect.promise(() => durability.flush())
          return result
        })
    return yield* SqlClient.make({
      ...acquirers,
      borrower,
      driver: "pglite",
      compiler: PgClient.makeCompiler(),
      spanAttributes: [["db.system.name", "postgresql"]]
    })
  })

export const layer = (dataDir: string | undefined, options: PgliteOptions = {}): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(dataDir, options)).pipe(Layer.provide(Reactivity.layer))
