import { PgClient } from "@effect/sql-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import * as SqliteClient from "../../src/store/sqlite/SqliteClient.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { dropDatabase, freshDatabase, postgresReachable, postgresUrl, tempDir } from "../support/TestServer.ts"
import { type GatewayProcess, startGatewayProcess } from "./GatewayProcess.ts"
import { isAnswer, postJson, send } from "./RawHttp.ts"
import { level, record, size, sleep } from "./Reliability.ts"

const reachable = await postgresReachable()

// Under CI an unreachable PostgreSQL is a failure, not a reason to skip.
const mustRun = reachable || process.env.CI === "true"

const withSql = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown, SqlClient.SqlClient>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient.SqlClient)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 2 }))) as Effect.Effect<A, unknown, never>
  )

interface Outcome {
  readonly status: number
  readonly generationId?: string
  readonly costNanos?: bigint
  readonly error?: string
}

type Store = "postgres" | "sqlite"

/** The store's books: every ledger row, the open holds, the workspace usage and the key counters' all-time sum. */
const booksOf = (store: Store, location: string) => {
  const read = Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* sql<{ generation_id: string; cost: string; is_byok: boolean | number }>`SELECT generation_id,
      CAST(cost_nanos AS text) AS cost, is_byok FROM ledger`
    const holds = yield* sql<{ id: string; owner: string | null }>`SELECT id, owner FROM holds`
    const account = yield* sql<{ usage: string }>`SELECT CAST(usage_nanos AS text) AS usage FROM credit_accounts`
    return { ledger, holds, usage: BigInt(account[0]!.usage) }
  })
  return store === "postgres"
    ? withSql(location, () => read)
    : Effect.runPromise(read.pipe(Effect.provide(SqliteClient.layer(NodePath.join(location, "switchyard.db")))) as Effect.Effect<Effect.Success<typeof read>, unknown, never>)
}

const getJson = async (origin: string, path: string, key: string) => {
  const reply = await send(origin, { method: "GET", path, headers: { authorization: `Bearer ${key}` }, timeoutMs: 10_000 })
  if (!isAnswer(reply)) throw new Error(`GET ${path}: ${reply.error}`)
  return reply
}

describe.skipIf(!mustRun)("reliability: kill -9 under load", () => {
  let upstream: FakeUpstream.FakeServer
  let crashes = 0
  let requests = 0

  beforeAll(async () => {
    if (!reachable) throw new Error(`PostgreSQL is not reachable at ${new URL(postgresUrl).host}; CI requires it`)
    upstream = await FakeOpenAi.start()
    upstream.setBehaviour({ _tag: "Delay", ms: 40 })
  })

  afterAll(async () => {
    record("crash-consistency", { crashesSurvived: crashes, faultsInjected: crashes, requests })
    await upstream?.close()
  })

  const round = async (store: Store, index: number) => {
    const databaseUrl = store === "postgres" ? await freshDatabase() : undefined
    const dataDir = tempDir("crash")
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1.5" } })])]
    }))
    const apiKey = KeySecret.generate()
    const managementKey = KeySecret.generate()
    const env = {
      ...(databaseUrl === undefined ? {} : { DATABASE_URL: databaseUrl }),
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_CONFIG: configPath,
      ALPHA_API_KEY: "sk-fake",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
      SWITCHYARD_RATE_LIMIT: "off"
    }
    let gateway: GatewayProcess | undefined
    try {
      gateway = await startGatewayProcess(env)
      const topUp = await postJson(gateway.origin, "/api/v1/credits", managementKey, { amount: 1000 })
      assert.strictEqual(topUp.status, 200)
      const upstreamBefore = upstream.requests.length
      const outcomes: Array<Outcome> = []
      let running = true
      const worker = async (w: number) => {
        for (let i = 0; running; i++) {
          requests += 1
          const reply = await send(gateway!.origin, {
            method: "POST",
            path: "/api/v1/embeddings",
            headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
            body: JSON.stringify({ model: "acme/embed", input: Array.from({ length: 1 + (i % 3) }, (_, k) => `worker ${w} request ${i} item ${k}`) }),
            timeoutMs: 10_000
          })
          if (!isAnswer(reply)) {
            outcomes.push({ status: 0, error: reply.error })
            continue
          }
          outcomes.push(reply.status === 200
            ? { status: 200, generationId: reply.headers["x-generation-id"] as string, costNanos: nanosFromCredits(reply.json.usage.cost)! }
            : { status: reply.status })
        }
      }
      const workers = Array.from({ length: 16 }, (_, w) => worker(w))
      const warm = level === "full" ? 300 : 80
      while (outcomes.length < warm) await sleep(10)
      await sleep((index * 617) % 400)
      running = false
      const killedAt = new Date()
      await gateway.kill("SIGKILL")
      await Promise.all(workers)
      crashes += 1

      const delivered = outcomes.filter((o) => o.status === 200)
      const refused = outcomes.filter((o) => o.status !== 200 && o.status !== 0)
      const unknown = outcomes.filter((o) => o.status === 0)
      assert.isAbove(delivered.length, 10, "the load ran before the kill")
      assert.deepStrictEqual(refused.map((o) => o.status), [], "nothing but 200 before the kill")

      gateway = await startGatewayProcess(env)
      // Every 200 is found by GET /generation with the cost it reported.
      for (const o of delivered) {
        const found = await getJson(gateway.origin, `/api/v1/generation?id=${o.generationId}`, apiKey)
        assert.strictEqual(found.status, 200, `GET /generation of the 200 ${o.generationId}`)
        assert.strictEqual(nanosFromCredits(found.json.data.total_cost), o.costNanos, o.generationId)
      }
      const listed = await getJson(gateway.origin, `/api/v1/keys/${KeySecret.hash(apiKey)}`, managementKey)
      const keyUsage = nanosFromCredits(listed.json.data.usage)!
      const holdsAfterRestart = store === "sqlite" ? Number(/^switchyard_holds_open (\d+)$/mu.exec(
        (await getJson(gateway.origin, "/metrics", managementKey)).text
      )?.[1]) : undefined

      let books: Awaited<ReturnType<typeof booksOf>>
      if (store === "sqlite") {
        // The embedded store belongs to one gateway: the books are read once it stopped.
        await gateway.stop()
        gateway = undefined
        books = await booksOf(store, dataDir)
      } else {
        books = await booksOf(store, databaseUrl!)
      }
      const rows = new Map(books.ledger.map((r) => [r.generation_id, BigInt(r.cost)]))
      assert.strictEqual(rows.size, books.ledger.length)
      for (const o of delivered) {
        assert.strictEqual(rows.get(o.generationId!), o.costNanos, `the 200 ${o.generationId} has exactly one ledger row with its cost`)
      }
      const orphans = books.ledger.length - delivered.length
      assert.isAtLeast(orphans, 0)
      assert.isAtMost(orphans, unknown.length, "a row without a delivered 200 belongs to a request cut by the kill")
      assert.isAtMost(books.ledger.length, upstream.requests.length - upstreamBefore, "every row was served upstream")
      const ledgerSum = books.ledger.reduce((sum, r) => sum + (r.is_byok === true || r.is_byok === 1 ? 0n : BigInt(r.cost)), 0n)
      assert.strictEqual(books.usage, ledgerSum, "the balance moved by the ledger's sum, once")
      assert.strictEqual(keyUsage, ledgerSum, "the key's usage is the ledger's sum")

      if (store === "sqlite") {
        // The dead process's lease went at the restart: the embedded store had no other process.
        assert.strictEqual(holdsAfterRestart, 0)
        return { store, delivered: delivered.length, unknown: unknown.length, orphans, holds: 0, releasedAfterMs: 0 }
      }

      // The dead process's lease: all open holds are its own, and the restarted gateway releases
      // them once the dead one has not been seen for 30 s (it heartbeats every 10 s, the survivor
      // sweeps every 10 s): within 40 s of the kill, not after the lease's ten-minute lifetime.
      assert.isAtMost(books.holds.length, 1, "one lease per key a process admitted from")
      const owners = [...new Set(books.holds.map((h) => h.owner))]
      assert.isAtMost(owners.length, 1, "every open hold belongs to the dead process")
      for (const owner of owners) assert.isString(owner)
      let releasedAfterMs = 0
      for (;;) {
        const left = await withSql(databaseUrl!, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM holds`)
        releasedAfterMs = Date.now() - killedAt.getTime()
        if (left[0]!.n === 0) break
        assert.isBelow(releasedAfterMs, 45_000, `the dead process's ${left[0]!.n} hold(s) are still there`)
        await sleep(250)
      }
      if (owners.length > 0) {
        const processes = await withSql(databaseUrl!, (sql) => sql<{ id: string }>`SELECT id FROM gateway_processes`)
        assert.notInclude(processes.map((r) => r.id), owners[0], "the dead process's row is gone with its holds")
      }

      const after = await postJson(gateway!.origin, "/api/v1/embeddings", apiKey, { model: "acme/embed", input: "after the crash" })
      assert.strictEqual(after.status, 200)
      const count = await withSql(databaseUrl!, (sql) => sql<{ n: number }>`SELECT count(*)::int AS n FROM ledger`)
      assert.strictEqual(count[0]!.n, books.ledger.length + 1)
      return { store, delivered: delivered.length, unknown: unknown.length, orphans, holds: books.holds.length, releasedAfterMs }
    } finally {
      await gateway?.stop()
      if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
    }
  }

  for (const store of ["sqlite", "postgres"] as const) {
    it(`${store}: kill -9 during load at c16, ${size.crashRounds} round(s): every 200 is found by GET /generation with its one ledger row, usage is the ledger's sum, dead leases release`, async () => {
      const summaries = []
      for (let i = 0; i < size.crashRounds; i++) summaries.push(await round(store, i))
      console.log("crash rounds", JSON.stringify(summaries))
      assert.isAbove(summaries.reduce((n, s) => n + s.delivered, 0), 0)
    }, level === "full" ? 900_000 : 180_000)
  }
})
