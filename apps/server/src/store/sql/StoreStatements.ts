import { Context, Effect, Layer } from "effect"
import { Statement } from "effect/sql"
import * as Prometheus from "prom-client"

/**
 * Counts what the gateway asks of its store: every SQL statement, by kind, and the rows each
 * batched ledger write carries. `/metrics` shows them as `switchyard_store_statements_total{kind}`
 * and `switchyard_store_batch_rows`.
 *
 * The kind is the `switchyard_*` function a statement calls (`lease`, `flush`...), or else its
 * first keyword (`select`, `insert`, `update`, `delete`, ...).
 */
export class StoreStatements extends Context.Service<StoreStatements, {
  readonly count: (kind: string) => void
  readonly batchRows: (rows: number) => void
  readonly render: Effect.Effect<string>
}>()("@switchyard/server/store/StoreStatements") {
  static readonly layer = Layer.sync(StoreStatements, () => {
    const registry = new Prometheus.Registry()
    const statements = new Prometheus.Counter({
      name: "switchyard_store_statements_total",
      help: "SQL statements sent to the store, by kind (the switchyard_* function called, else the first keyword)",
      labelNames: ["kind"] as const,
      registers: [registry]
    })
    const rows = new Prometheus.Histogram({
      name: "switchyard_store_batch_rows",
      help: "Ledger rows written by one batched statement",
      buckets: [1, 2, 4, 8, 16, 32, 64, 128, 256],
      registers: [registry]
    })
    return StoreStatements.of({
      count: (kind) => statements.inc({ kind }),
      batchRows: (n) => rows.observe(n),
      render: Effect.promise(() => registry.metrics())
    })
  })
}

const functionCall = /\bswitchyard_([a-z_]+)\s*\(/u
const firstWord = /^\s*\(?\s*([A-Za-z]+)/u

/** The kind of a statement's SQL text. */
const kindOf = (text: string): string => {
  const called = functionCall.exec(text)
  if (called !== null) return called[1]!
  return firstWord.exec(text)?.[1]?.toLowerCase() ?? "other"
}

// Kinds by the statement's literal text: the gateway's statements are a few dozen fixed texts.
const kinds = new Map<string, string>()
const maxKinds = 512

/**
 * The kind of a statement, read from its literal SQL text: the driver compiles the statement, so
 * counting it does not compile it a second time.
 */
const kindOfStatement = (statement: Statement.Statement<unknown>): string => {
  let text = ""
  for (const segment of statement.segments) {
    if (segment._tag === "Literal") text += segment.value
    else text += " ? "
  }
  let kind = kinds.get(text)
  if (kind === undefined) {
    kind = kindOf(text)
    if (kinds.size < maxKinds) kinds.set(text, kind)
  }
  return kind
}

/**
 * Set around an operation that counts itself once under its own kind (the SQLite money store: one
 * grant or flush, one transaction of several statements, counted as `lease` or `flush` as the
 * PostgreSQL function call it stands for): its statements are not counted one by one.
 */
export const Uncounted = Context.Reference<boolean>("@switchyard/server/store/StoreStatements/Uncounted", { defaultValue: () => false })

/**
 * The statement hook that counts every statement run in its context (`Statement.CurrentTransformer`),
 * but those of an operation counted as a whole (`Uncounted`).
 */
export const counting: Layer.Layer<never, never, StoreStatements> = Layer.effectContext(
  Effect.gen(function*() {
    const counter = yield* StoreStatements
    return Context.make(Statement.CurrentTransformer, (self, _sql, fiber) => {
      if (!Context.get(fiber.context, Uncounted)) counter.count(kindOfStatement(self))
      return Effect.succeed(self)
    })
  })
) as Layer.Layer<never, never, StoreStatements>
