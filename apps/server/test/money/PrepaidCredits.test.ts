import { PgClient } from "@effect/sql-pg"
import { assert, describe, layer } from "@effect/vitest"
import { Effect, Layer, Redacted } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import * as AccountingLive from "../../src/store/money/AccountingLive.ts"
import { migrate, migrations } from "../../src/store/database/Migrations.ts"
import { refusal, seedKey, storeSupport } from "../support/MoneyStore.ts"
import { dropDatabase, freshDatabase, storeKind } from "../support/TestServer.ts"

/**
 * An empty, unmigrated PostgreSQL database: the test decides which migrations run. PostgreSQL keeps
 * its migration history; a SQLite store starts from the baseline (test/store/SqliteSchema.test.ts).
 */
const driver = Layer.unwrap(Effect.gen(function*() {
    const url = yield* Effect.acquireRelease(Effect.promise(() => freshDatabase()), (url) => Effect.promise(() => dropDatabase(url)))
    return PgClient.layer({ url: Redacted.make(url), maxConnections: 8 }) as Layer.Layer<SqlClient.SqlClient, unknown>
  }))

const before = Object.fromEntries(Object.entries(migrations).filter(([name]) => name < "0006"))
const migrateBefore = Migrator.make({})({ loader: Migrator.fromRecord(before), table: "switchyard_migrations" })

describe.skipIf(storeKind !== "postgres")("PostgreSQL's migration history", () => {
  layer(driver, { timeout: 120_000, excludeTestServices: true })(`prepaid credits migration (${storeKind})`, (it) => {
    it.effect("workspaces that held credits before the upgrade keep enforcing them; the others stop", () =>
      Effect.gen(function*() {
        yield* migrateBefore
        const sql = yield* SqlClient.SqlClient
        const funded = yield* seedKey()
        const unfunded = yield* seedKey()
        yield* sql`INSERT INTO credit_accounts (workspace_id, credits_nanos, usage_nanos) VALUES
          (${funded.workspaceId}, 100, 40), (${unfunded.workspaceId}, 0, 0)`
        yield* migrate
        const accounting = yield* AccountingLive.make({}).pipe(Effect.provide(storeSupport))
        const refused = yield* refusal(
          accounting.reserve({ keyId: funded.keyId, workspaceId: funded.workspaceId, amountNanos: 61n, byok: false })
        )
        assert.strictEqual(refused.metadata?.reason, "workspace_credits")
        yield* accounting.reserve({ keyId: funded.keyId, workspaceId: funded.workspaceId, amountNanos: 60n, byok: false })
        yield* accounting.reserve({ keyId: unfunded.keyId, workspaceId: unfunded.workspaceId, amountNanos: 1_000_000n, byok: false })
        const flags = yield* sql<{ workspace_id: string; prepaid: boolean }>`SELECT workspace_id, prepaid FROM credit_accounts`
        assert.deepStrictEqual(
          Object.fromEntries(flags.map((r) => [r.workspace_id, r.prepaid])),
          { [funded.workspaceId]: true, [unfunded.workspaceId]: false }
        )
      }))
  })
})
