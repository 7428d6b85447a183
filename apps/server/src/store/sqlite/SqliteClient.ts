/**
 * A `SqlClient` over SQLite through Node's built-in `node:sqlite` (no native addon): the embedded
 * store. One connection per process, shared through the client's semaphore (SQLite runs one
 * statement at a time per connection); statements are prepared once and kept by their SQL text.
 *
 * **Details**
 *
 * - Journal: WAL (its size bounded, see `StoreUpkeep`), `auto_vacuum = INCREMENTAL`, `synchronous = FULL` (a commit is on disk before its statement returns, so an
 *   answer sent after it survives a power cut), foreign keys on, a busy timeout so several processes
 *   (`SWITCHYARD_WORKERS`) on one file wait for each other's write lock instead of failing.
 * - Transactions begin with `BEGIN IMMEDIATE`: the write lock is taken at the start, so a
 *   read-then-write transaction never fails half-way for another process's writer.
 * - Values: booleans are bound as 1/0 and `Date`s as their epoch milliseconds (SQLite has neither
 *   type); everything else as `node:sqlite` binds it. Rows come back as plain objects.
 * - Errors are classified by SQLite's result code (`classifySqliteError`), so a unique violation,
 *   a busy database or a full disk reach callers as their `SqlError` reason.
 */
import { Context, Effect, Layer, References, Semaphore, Stream } from "effect"
import type { Scope } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient, Statement } from "effect/sql"
import type { SqlConnection } from "effect/sql"
import * as SqlError from "effect/sql/SqlError"
import { DatabaseSync } from "node:sqlite"
import type { SQLInputValue, StatementSync } from "node:sqlite"
import * as StoreUpkeep from "./StoreUpkeep.ts"

export interface SqliteOptions {
  /** How long a statement waits for another process's write lock before failing as busy. */
  readonly busyTimeoutMs?: number
  /** `FULL` (default): every commit on disk before it returns. `NORMAL`: a power cut may lose the last commits. */
  readonly synchronous?: "FULL" | "NORMAL"
  /** How many prepared statements are kept; the least recently used are finalized past it. */
  readonly preparedCapacity?: number
}

/** The SQLite result code of a failure, where it has one (`errcode` on `node:sqlite`'s errors). */
const resultCode = (cause: unknown): number | undefined => {
  const code = (cause as { errcode?: unknown } | null)?.errcode
  return typeof code === "number" ? code : undefined
}

/** SQLITE_CONSTRAINT_PRIMARYKEY and SQLITE_CONSTRAINT_UNIQUE: a unique violation, as PostgreSQL's 23505. */
const uniqueCodes = new Set([1555, 2067])

const classify = (operation: string) => (cause: unknown) => {
  const errno = resultCode(cause)
  const message = cause instanceof Error ? cause.message : String(cause)
  if (errno !== undefined && uniqueCodes.has(errno)) {
    // "UNIQUE constraint failed: table.column, ...": the columns name the constraint.
    const constraint = message.replace(/^.*constraint failed:\s*/u, "")
    return new SqlError.SqlError({ reason: new SqlError.UniqueViolation({ cause, message, operation, constraint }) })
  }
  const reason = SqlError.classifySqliteError(errno === undefined ? cause : { cause, errno, message }, { message, operation })
  return new SqlError.SqlError({ reason })
}

const bindable = (value: unknown): SQLInputValue => {
  if (typeof value === "boolean") return value ? 1 : 0
  if (value instanceof Date) return value.getTime()
  if (value === undefined) return null
  return value as SQLInputValue
}

const bindAll = (params: ReadonlyArray<unknown>): Array<SQLInputValue> => params.map(bindable)

/** Prepared statements by SQL text, least recently used first. */
class Prepared {
  private readonly statements = new Map<string, StatementSync>()
  private readonly db: DatabaseSync
  private readonly capacity: number
  constructor(db: DatabaseSync, capacity: number) {
    this.db = db
    this.capacity = capacity
  }

  get(sql: string): StatementSync {
    const kept = this.statements.get(sql)
    if (kept !== undefined) {
      this.statements.delete(sql)
      this.statements.set(sql, kept)
      return kept
    }
    const statement = this.db.prepare(sql)
    this.statements.set(sql, statement)
    if (this.statements.size > this.capacity) {
      const oldest = this.statements.keys().next().value as string
      this.statements.delete(oldest)
    }
    return statement
  }

  clear(): void {
    this.statements.clear()
  }
}

// Stepped to completion with `all` whether or not it has columns: `run` steps once, and a pragma
// such as `incremental_vacuum` does one page of its work per step.
const rowsOf = (statement: StatementSync, params: ReadonlyArray<unknown>, arrays: boolean): ReadonlyArray<any> => {
  statement.setReturnArrays(arrays)
  const rows = statement.all(...bindAll(params))
  return statement.columns().length > 0 ? rows : []
}

/** SQLITE_FULL (13) and SQLITE_IOERR (10, with its extended codes): the disk refused a write. */
const isDiskFailure = (cause: unknown): boolean => {
  const code = resultCode(cause)
  return code !== undefined && ((code & 0xff) === 13 || (code & 0xff) === 10)
}

const writes = /^\s*(insert|update|delete|commit|with|replace)\b/i

/** A transaction's control statements: they change no schema. */
const transactionControl = /^\s*(begin|commit|end|rollback|savepoint|release)\b/i

/**
 * Says once that the disk refused a write (where, and that writes answer 503 until space
 * returns), and once that writes succeed again: not a line per refused request. Small commits may
 * still fit in the log's allocated space while larger ones fail, so "again" waits for
 * {@link quietMs} without a refusal.
 */
class DiskWatch {
  private refused = false
  private lastFailure = 0
  private readonly filename: string
  constructor(filename: string) {
    this.filename = filename
  }

  failed(cause: unknown): Effect.Effect<void> {
    if (!isDiskFailure(cause)) return Effect.void
    this.lastFailure = Date.now()
    if (this.refused) return Effect.void
    this.refused = true
    const message = cause instanceof Error ? cause.message : String(cause)
    return Effect.logError(
      `store: the disk is full or failing: SQLite cannot write ${this.filename} (${message}); ` +
        "writes answer 503 with Retry-After until space returns"
    )
  }

  /** A statement succeeded; `committed` when it left no transaction open (its writes are on disk). */
  succeeded(sql: string, committed: boolean): Effect.Effect<void> {
    if (!this.refused || !committed || !writes.test(sql) || Date.now() - this.lastFailure < quietMs) return Effect.void
    this.refused = false
    return Effect.logInfo(`store: ${this.filename} is written again`)
  }
}

/** How long writes succeed without a refusal before the disk counts as writable again. */
const quietMs = 10_000

const connectionOf = (db: DatabaseSync, prepared: Prepared, disk: DiskWatch): SqlConnection.Connection => {
  const run = <A>(sql: string, f: () => A) =>
    Effect.suspend(() => {
      try {
        const result = f()
        return Effect.as(disk.succeeded(sql, !db.isTransaction), result)
      } catch (cause) {
        return Effect.andThen(disk.failed(cause), Effect.fail(classify("execute")(cause)))
      }
    })
  return {
    execute: (sql, params, transformRows) =>
      run(sql, () => {
        const rows = rowsOf(prepared.get(sql), params, false)
        return transformRows === undefined ? rows : transformRows(rows)
      }),
    executeRaw: (sql, params) =>
      run(sql, () => {
        const statement = prepared.get(sql)
        statement.setReturnArrays(false)
        if (statement.columns().length > 0) return statement.all(...bindAll(params))
        const result = statement.run(...bindAll(params))
        return { changes: result.changes, lastInsertRowid: result.lastInsertRowid }
      }),
    executeValues: (sql, params) => run(sql, () => rowsOf(prepared.get(sql), params, true)),
    executeValuesUnprepared: (sql, params) => run(sql, () => rowsOf(db.prepare(sql), params, true)),
    executeUnprepared: (sql, params, transformRows) =>
      run(sql, () => {
        // Schema changes and multi-statement text run once: not kept prepared. A schema change
        // also drops the statements kept; a transaction's own control (`BEGIN IMMEDIATE`,
        // `COMMIT`, savepoints) leaves them, or every transaction would prepare its statements anew.
        if (params.length === 0 && !/^\s*(select|with|insert|update|delete)\b/i.test(sql)) {
          db.exec(sql)
          if (!transactionControl.test(sql)) prepared.clear()
          return []
        }
        const rows = rowsOf(db.prepare(sql), params, false)
        return transformRows === undefined ? rows : transformRows(rows)
      }),
    executeStream: (sql, params, transformRows) =>
      Stream.fromIterableEffect(run(sql, () => {
        const rows = rowsOf(prepared.get(sql), params, false)
        return transformRows === undefined ? rows : transformRows(rows)
      }))
  }
}

/**
 * Statements on the store's connection without the `SqlClient`'s statement machinery (compiling
 * a template, a span and the connection's lock per statement): for the money store's grants and
 * flushes, whose statements are few, constant and all inside one transaction that a lone request
 * waits for.
 *
 * **Details**
 *
 * - {@link Direct.transaction} runs an effect as one `BEGIN IMMEDIATE` transaction, holding the
 *   client's lock (the one its own transactions hold) throughout; inside a transaction of the
 *   client on the same fiber it joins that one instead. A failure or an interruption rolls back.
 * - {@link Direct.q} is a statement of that transaction: a template whose values are bound as `?`,
 *   its text built once per call site and its prepared statement kept with the client's. It needs
 *   {@link InTransaction}, which only `transaction` provides: a statement cannot run outside one.
 *   Inside, every statement goes through `q` or `unsafe`: one of the client's own would wait for
 *   the lock the transaction holds.
 * - Failures are the client's (`SqlError` by SQLite's result code), and a full disk is reported
 *   as the client reports it.
 */
export class InTransaction extends Context.Service<InTransaction, true>()("switchyard/store/SqliteClient/InTransaction") {}

export interface Direct {
  readonly transaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | SqlError.SqlError, Exclude<R, InTransaction>>
  readonly q: <A extends object = Record<string, unknown>>(
    strings: TemplateStringsArray,
    ...values: ReadonlyArray<unknown>
  ) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError, InTransaction>
  /** A statement of the transaction from its text (`?` for each value). */
  readonly unsafe: <A extends object = Record<string, unknown>>(
    sql: string,
    values: ReadonlyArray<unknown>
  ) => Effect.Effect<ReadonlyArray<A>, SqlError.SqlError, InTransaction>
}

const directs = new WeakMap<SqlClient.SqlClient, Direct>()

/** The direct statements of a client this module made; `undefined` for any other client. */
export const directOf = (sql: SqlClient.SqlClient): Direct | undefined => directs.get(sql)

const directOn = (
  client: SqlClient.SqlClient,
  db: DatabaseSync,
  connection: SqlConnection.Connection,
  lock: Semaphore.Semaphore
): Direct => {
  const joined = client.transactionService
  const texts = new WeakMap<TemplateStringsArray, string>()
  // Through the connection's own executors: the same classified errors and the same disk watch
  // as the client's statements, and a transaction's control leaves the prepared statements.
  const control = (sql: string) => Effect.asVoid(connection.executeUnprepared(sql, [], undefined))
  const rollback = Effect.suspend(() => (db.isTransaction ? Effect.ignore(control("ROLLBACK")) : Effect.void))
  const execute = <A extends object>(sql: string, values: ReadonlyArray<unknown>) =>
    connection.execute(sql, values, undefined) as Effect.Effect<ReadonlyArray<A>, SqlError.SqlError>
  // With tracing on, each statement is a client span as the client's own are (free when off).
  const traced = <A extends object>(sql: string, values: ReadonlyArray<unknown>, tracing: boolean) =>
    tracing
      ? Effect.withSpan(execute<A>(sql, values), "sql.execute", {
        kind: "client",
        attributes: { "db.system.name": "sqlite", "db.query.text": sql },
        captureStackTrace: false
      })
      : execute<A>(sql, values)
  // A statement transformer in the fiber's context (a test's recorder, an instrumentation) sees
  // and may rewrite each statement, as it does the client's own.
  const unsafe = <A extends object>(sql: string, values: ReadonlyArray<unknown>) =>
    Effect.withFiber((fiber) => {
      const transform = fiber.getRef(Statement.CurrentTransformer)
      const tracing = fiber.getRef(References.TracerEnabled)
      if (transform === undefined) return traced<A>(sql, values, tracing)
      return Effect.makeSpan("sql.execute").pipe(
        Effect.flatMap((span) => transform(client.unsafe(sql, values), client, fiber, span)),
        Effect.flatMap((statement) => {
          const [text, params] = statement.compile()
          return traced<A>(text, params, tracing)
        })
      )
    })
  // A transaction left open by a failed cleanup is rolled back first, as the client's own do.
  const own = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
    lock.withPermit(Effect.uninterruptible(
      rollback.pipe(
        Effect.andThen(control("BEGIN IMMEDIATE")),
        Effect.andThen(effect.pipe(Effect.provideService(InTransaction, true))),
        Effect.tap(() => control("COMMIT")),
        Effect.onError(() => rollback)
      )
    )) as Effect.Effect<A, E | SqlError.SqlError, Exclude<R, InTransaction>>
  return {
    transaction: (effect) =>
      Effect.withFiber((fiber) =>
        fiber.context.mapUnsafe.has(joined.key)
          ? Effect.provideService(effect, InTransaction, true) as Effect.Effect<any, any, any>
          : own(effect)
      ),
    q: (strings, ...values) => {
      let text = texts.get(strings)
      if (text === undefined) {
        text = strings.join("?")
        texts.set(strings, text)
      }
      return unsafe(text, values)
    },
    unsafe
  }
}

/**
 * Opens (creating where missing) the SQLite database at `filename` (`:memory:` for a private
 * in-memory one) and serves it as a `SqlClient` until the scope closes.
 */
const make = (
  filename: string,
  options: SqliteOptions = {}
): Effect.Effect<SqlClient.SqlClient, SqlError.SqlError, Scope.Scope | Reactivity.Reactivity> =>
  Effect.gen(function*() {
    const db = yield* Effect.acquireRelease(
      Effect.try({
        try: () => {
          const db = new DatabaseSync(filename, { timeout: options.busyTimeoutMs ?? 5000 })
          try {
            // Before the first table: freed pages wait on a free list that upkeep gives back in steps.
            db.exec("PRAGMA auto_vacuum = INCREMENTAL")
            if (filename !== ":memory:") db.exec("PRAGMA journal_mode = WAL")
            for (const setting of StoreUpkeep.settings) db.exec(setting)
            db.exec(`PRAGMA synchronous = ${options.synchronous ?? "FULL"}`)
            db.exec("PRAGMA foreign_keys = ON")
          } catch (cause) {
            db.close()
            throw cause
          }
          return db
        },
        catch: classify("connect")
      }),
      (db) => Effect.sync(() => {
        if (db.isOpen) db.close()
      })
    )
    const prepared = new Prepared(db, options.preparedCapacity ?? 256)
    const disk = new DiskWatch(filename)
    const connection = connectionOf(db, prepared, disk)
    const lock = Semaphore.makeUnsafe(1)
    const acquirers = SqlClient.makeSqliteAcquirers({
      connection: Effect.succeed(connection),
      semaphore: lock,
      isTransaction: () => db.isTransaction
    })
    const client = yield* SqlClient.make({
      ...acquirers,
      driver: "sqlite",
      compiler: Statement.makeCompilerSqlite(),
      beginTransaction: "BEGIN IMMEDIATE",
      spanAttributes: [["db.system.name", "sqlite"]]
    })
    directs.set(client, directOn(client, db, connection, lock))
    return client
  })

export const layer = (filename: string, options: SqliteOptions = {}): Layer.Layer<SqlClient.SqlClient, SqlError.SqlError> =>
  Layer.effect(SqlClient.SqlClient, make(filename, options)).pipe(Layer.provide(Reactivity.layer))
