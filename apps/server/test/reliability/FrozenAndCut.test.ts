import { PgClient } from "@effect/sql-pg"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { type StoreRelay, startStoreRelay } from "../support/StoreRelay.ts"
import { dropDatabase, freshDatabase, tempDir } from "../support/TestServer.ts"
import { type GatewayProcess, startGatewayProcess } from "./GatewayProcess.ts"
import { isAnswer, postJson, send } from "./RawHttp.ts"
import { level, record, sleep } from "./Reliability.ts"

/**
 * Exact money when a replica freezes and PostgreSQL flickers, against `src/main.ts` processes:
 * a key whose limit affords N flat-priced requests, loaded from two replicas.
 *
 * - SIGSTOP one replica past the sweep bound (its leases are swept and their room used by the
 *   other), then SIGCONT: the ledger holds at most N rows, and none for a request answered
 *   anything but 200.
 * - Ten 1 s cuts and one 10 s cut of PostgreSQL through a TCP relay: the same, and once the store
 *   is back no lease room stays held (every hold is handed back within 30 s), so the whole
 *   remaining limit is spent: exactly N rows.
 *
 * Each takes about a minute and a half; they run under `SWITCHYARD_RELIABILITY=full` only.
 */

/** A dollar a thousand requests, whatever the input. */
const pricePerRequest = 0.001

const withSql = <A>(url: string, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient.SqlClient)
    }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))) as Effect.Effect<A, unknown, never>
  )

const ledgerIds = (url: string) =>
  withSql(url, (sql) => sql<{ generation_id: string }>`SELECT generation_id FROM ledger`).then((rows) => rows.map((r) => r.generation_id))

const heldNanos = (url: string) =>
  withSql(url, (sql) => sql<{ n: string }>`SELECT COALESCE(SUM(amount_nanos), 0)::text AS n FROM holds`).then((rows) => BigInt(rows[0]!.n))

interface Load {
  readonly ok: Set<string>
  readonly statuses: Map<number, number>
  /** Requests with no answer (transport error or client time-out). */
  unanswered: number
  /** Why, by error. */
  readonly errors: Map<string, number>
  stop: () => Promise<void>
}

/** `clients` concurrent clients per gateway, each sending embeddings until stopped, pausing after a refusal. */
const load = (gateways: ReadonlyArray<GatewayProcess>, key: string, clients: number, pauseMs = 0): Load => {
  let running = true
  const result: Load = { ok: new Set(), statuses: new Map(), unanswered: 0, errors: new Map(), stop: async () => {} }
  const client = async (gateway: GatewayProcess, c: number) => {
    for (let i = 0; running; i++) {
      const reply = await send(gateway.origin, {
        method: "POST",
        path: "/api/v1/embeddings",
        headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "acme/embed", input: `client ${c} request ${i}` }),
        timeoutMs: 90_000
      })
      if (!isAnswer(reply)) {
        result.unanswered++
        result.errors.set(reply.error, (result.errors.get(reply.error) ?? 0) + 1)
        await sleep(50)
        continue
      }
      result.statuses.set(reply.status, (result.statuses.get(reply.status) ?? 0) + 1)
      if (reply.status === 200) result.ok.add(reply.headers["x-generation-id"] as string)
      else await sleep(50)
      if (pauseMs > 0) await sleep(pauseMs)
    }
  }
  const all = gateways.flatMap((g) => Array.from({ length: clients }, (_, c) => client(g, c)))
  result.stop = async () => {
    running = false
    await Promise.all(all)
  }
  return result
}

/** The books against the answers: rows, rows of requests not answered 200, and the limit. */
const audit = async (url: string, answered: Load, limitRequests: number) => {
  const ids = await ledgerIds(url)
  const chargedNot200 = ids.filter((id) => !answered.ok.has(id)).length
  const okWithoutRow = [...answered.ok].filter((id) => !ids.includes(id)).length
  return {
    rows: ids.length,
    limit: limitRequests,
    chargedNot200,
    okWithoutRow,
    unanswered: answered.unanswered,
    errors: Object.fromEntries(answered.errors),
    statuses: Object.fromEntries(answered.statuses)
  }
}

describe.skipIf(level !== "full")("reliability: a frozen replica and a flickering PostgreSQL", () => {
  let upstream: FakeUpstream.FakeServer
  let faults = 0
  let requests = 0

  beforeAll(async () => {
    upstream = await FakeOpenAi.start()
    upstream.setBehaviour({ _tag: "Delay", ms: 40 })
  })
  afterAll(async () => {
    record("frozen-and-cut", { faultsInjected: faults, requests })
    await upstream?.close()
  })

  const setUp = async (databaseUrl: string) => {
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [
        endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0", request: String(pricePerRequest) } })
      ])]
    }))
    const managementKey = KeySecret.generate()
    return {
      managementKey,
      env: (dataDir: string) => ({
        DATABASE_URL: databaseUrl,
        SWITCHYARD_DATA_DIR: dataDir,
        SWITCHYARD_CONFIG: configPath,
        ALPHA_API_KEY: "sk-fake",
        SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
        SWITCHYARD_RATE_LIMIT: "off",
        SWITCHYARD_LOG_LEVEL: "warn"
      })
    }
  }

  const limitedKey = async (gateway: GatewayProcess, managementKey: string, requestsAllowed: number) => {
    const created = await postJson(gateway.origin, "/api/v1/keys", managementKey, { name: "limited", limit: requestsAllowed * pricePerRequest })
    assert.isTrue(isAnswer(created) && created.status === 201, JSON.stringify(created))
    return (created as { json: any }).json.key as string
  }

  it("SIGSTOP of one of two replicas past the sweep bound, then SIGCONT: at most N rows, none for a request not answered 200", async () => {
    const limitRequests = 2000
    const databaseUrl = await freshDatabase()
    const { env, managementKey } = await setUp(databaseUrl)
    const gateways: Array<GatewayProcess> = []
    try {
      gateways.push(await startGatewayProcess(env(tempDir("frozen-a"))))
      gateways.push(await startGatewayProcess(env(tempDir("frozen-b"))))
      const [a, b] = gateways as [GatewayProcess, GatewayProcess]
      const key = await limitedKey(a, managementKey, limitRequests)
      const running = load([a, b], key, 16)
      while (running.ok.size < 200) await sleep(20)
      // A holds a slice of the limit in memory; frozen, it looks dead to B, which sweeps its lease
      // (unseen for 30 s, swept on B's next heartbeat) and spends that room itself.
      process.kill(a.pid, "SIGSTOP")
      faults++
      const frozenAt = Date.now()
      await sleep(45_000)
      const rowsAtResume = (await ledgerIds(databaseUrl)).length
      process.kill(a.pid, "SIGCONT")
      // A resumes with its slice in memory: it must ask the store again before it admits.
      await sleep(15_000)
      await running.stop()
      requests += [...running.statuses.values()].reduce((n, s) => n + s, 0) + running.unanswered
      const books = await audit(databaseUrl, running, limitRequests)
      console.log("frozen replica", JSON.stringify({ ...books, rowsAtResume, frozenMs: 45_000, frozenAt: new Date(frozenAt).toISOString() }))
      assert.isAtMost(books.rows, limitRequests, "no overshoot")
      assert.strictEqual(books.chargedNot200, 0, "no row for a request answered anything but 200")
      assert.strictEqual(books.okWithoutRow, 0, "every 200 has its row")
    } finally {
      for (const g of gateways) {
        if (g.isRunning()) process.kill(g.pid, "SIGCONT")
        await g.stop()
      }
      await dropDatabase(databaseUrl)
    }
  }, 240_000)

  it("ten 1 s cuts and one 10 s cut of PostgreSQL under load: no overshoot, no row without a 200, the whole remaining limit usable within 30 s of the restore", async () => {
    const limitRequests = 4000
    const databaseUrl = await freshDatabase()
    const relay: StoreRelay = await startStoreRelay(databaseUrl)
    const { env, managementKey } = await setUp(relay.url)
    const gateways: Array<GatewayProcess> = []
    try {
      gateways.push(await startGatewayProcess(env(tempDir("cut-a"))))
      gateways.push(await startGatewayProcess(env(tempDir("cut-b"))))
      const key = await limitedKey(gateways[0]!, managementKey, limitRequests)
      // Paced while the store flickers, so that most of the limit is left for after the restore.
      const paced = load(gateways, key, 16, 200)
      await sleep(2_000)
      for (let i = 0; i < 10; i++) {
        await relay.cut()
        faults++
        await sleep(1_000)
        await relay.open()
        await sleep(1_500)
      }
      await relay.cut()
      faults++
      await sleep(10_000)
      await relay.open()
      const restoredAt = Date.now()
      await sleep(3_000)
      await paced.stop()
      // Nothing in flight: every hold left is room no request uses. All of it goes back.
      let heldAfterMs = 0
      for (;;) {
        const held = await heldNanos(databaseUrl).catch(() => -1n)
        heldAfterMs = Date.now() - restoredAt
        if (held === 0n || heldAfterMs > 45_000) break
        await sleep(100)
      }
      const rowsBeforeRest = (await ledgerIds(databaseUrl)).length
      // The rest of the limit, spent flat out: exactly N rows in all.
      const rest = load(gateways, key, 16)
      const restStarted = Date.now()
      for (;;) {
        const rows = (await ledgerIds(databaseUrl)).length
        if (rows >= limitRequests || Date.now() - restStarted > 60_000) break
        await sleep(250)
      }
      await sleep(1_000)
      await rest.stop()
      const spentRestMs = Date.now() - restStarted
      const both: Load = {
        ok: new Set([...paced.ok, ...rest.ok]),
        statuses: new Map([...new Set([...paced.statuses.keys(), ...rest.statuses.keys()])].map((s) => [s, (paced.statuses.get(s) ?? 0) + (rest.statuses.get(s) ?? 0)])),
        unanswered: paced.unanswered + rest.unanswered,
        errors: new Map([...paced.errors, ...rest.errors]),
        stop: async () => {}
      }
      requests += [...both.statuses.values()].reduce((n, s) => n + s, 0) + both.unanswered
      const books = await audit(databaseUrl, both, limitRequests)
      console.log("store cuts", JSON.stringify({ ...books, rowsBeforeRest, heldAfterRestoreMs: heldAfterMs, spentRestMs }))
      assert.isAtMost(heldAfterMs, 30_000, "every lease handed back within 30 s of the restore")
      assert.strictEqual(books.rows, limitRequests, "the whole limit was usable, and not a request more")
      assert.strictEqual(books.chargedNot200, 0, "no row for a request answered anything but 200")
      assert.strictEqual(books.okWithoutRow, 0, "every 200 has its row")
    } finally {
      await relay.open().catch(() => undefined)
      for (const g of gateways) await g.stop()
      await relay.cut()
      await dropDatabase(databaseUrl)
    }
  }, 300_000)
})
