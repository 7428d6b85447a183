/**
 * Migrations are history: a store migrated before ran their statements, so what a migration sends
 * stays what it sent, to the byte. `0004_spend_counters` (`key_spend`) and `0007_workspace_budgets`
 * (`workspace_spend`) make their spend counter tables through one helper (`SpendTable.ts`); the
 * statements each migration sends, compiled by PostgreSQL's compiler on a client that records them
 * instead of sending them, are pinned here by the SHA-256 of the statements the two migrations sent
 * when each still wrote its own.
 */
import { PgClient } from "@effect/sql-pg"
import { assert, describe, it } from "@effect/vitest"
import { Effect, Stream } from "effect"
import { Reactivity } from "effect/reactivity"
import { SqlClient } from "effect/sql"
import type { Connection } from "effect/sql/SqlConnection"
import * as Crypto from "node:crypto"
import { spendCounters } from "../../src/store/database/migrations/SpendCounters.ts"
import { workspaceBudgets } from "../../src/store/database/migrations/WorkspaceBudgets.ts"

/** Every statement the migration sends, with its parameters, as PostgreSQL's compiler renders it. */
const sentBy = (migration: Effect.Effect<void, unknown, SqlClient.SqlClient>) =>
  Effect.gen(function*() {
    const sent: Array<string> = []
    const record = (sql: string, params: ReadonlyArray<unknown>) =>
      Effect.sync((): Array<never> => {
        sent.push(`${sql}\n-- ${JSON.stringify(params)}`)
        return []
      })
    const connection: Connection = {
      execute: record,
      executeRaw: record,
      executeValues: record,
      executeValuesUnprepared: record,
      executeUnprepared: record,
      executeStream: () => Stream.empty
    }
    const client = yield* SqlClient.make({ acquirer: Effect.succeed(connection), compiler: PgClient.makeCompiler(), driver: "pg", spanAttributes: [] })
    yield* Effect.provideService(migration, SqlClient.SqlClient, client)
    return sent
  }).pipe(Effect.provide(Reactivity.layer))

const digest = (statements: ReadonlyArray<string>) => Crypto.createHash("sha256").update(statements.join("\n;\n")).digest("hex")

describe("migrations are history", () => {
  it.effect("0004_spend_counters and 0007_workspace_budgets send the statements they always sent", () =>
    Effect.gen(function*() {
      const keys = yield* sentBy(spendCounters)
      const workspaces = yield* sentBy(workspaceBudgets)
      assert.deepStrictEqual(
        { keys: [keys.length, digest(keys)], workspaces: [workspaces.length, digest(workspaces)] },
        {
          keys: [5, "4109f42c96646cc509e3d0db72163e57eb23dba229c15e935c5b0343c516a1a8"],
          workspaces: [10, "615d5bb3030a2f825f9d236f22802627d16f504040fd64da394abc4af5d429a9"]
        }
      )
    }))
})
