// `pnpm --filter @switchyard/bench money-rounds [--store sqlite|postgres] [--rounds N] [--seconds N] [--idle N] [--final N] [--limit-requests N]`
/**
 * Money across processes, by hand (issue 44's closing figures, not CI): priced small c=16 on one
 * key through two processes sharing one store — `SWITCHYARD_WORKERS=2` on the embedded store, two
 * gateways on one PostgreSQL database (`DATABASE_URL`, a throw-away database on its server) — in
 * `--rounds` rounds of `--seconds` separated by `--idle` seconds without a request (longer than
 * the 30 s after which a silent process's holds may be swept), then `--final` seconds of load.
 * Counts the answers that were not 2xx and compares the ledger's rows with the 200s one to one.
 * Then a key with a limit of `--limit-requests` requests' cost is spent through both processes at
 * once until both refuse: its ledger must sum to the limit exactly.
 */
import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { parseArgs } from "node:util"
import * as KeySecret from "../../apps/server/src/auth/KeySecret.ts"
import * as SqliteClient from "../../apps/server/src/store/sqlite/SqliteClient.ts"
import { width } from "./Cells.ts"
import * as Harness from "./Harness.ts"
import * as Load from "./Load.ts"
import { sleep, startSwitchyard, type Switchyard } from "./Processes.ts"

const { values } = parseArgs({
  options: {
    store: { type: "string", default: "sqlite" },
    rounds: { type: "string", default: "3" },
    seconds: { type: "string", default: "10" },
    idle: { type: "string", default: "40" },
    final: { type: "string", default: "60" },
    "limit-requests": { type: "string", default: "2000" },
    "limit-only": { type: "boolean", default: false }
  }
})
const store = values.store === "postgres" ? "postgres" : "sqlite"
const serverUrl = process.env.DATABASE_URL?.trim() || undefined
const log = (line: string) => console.log(`[${new Date().toISOString().slice(11, 19)}] ${line}`)

/** Reads the store the gateways share (after they stopped, or while they run). */
const query = <A>(dataDir: string, databaseUrl: string | undefined, f: (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>) =>
  Effect.runPromise(
    Effect.gen(function*() {
      return yield* f(yield* SqlClient.SqlClient)
    }).pipe(
      Effect.provide(
        databaseUrl === undefined
          ? SqliteClient.layer(NodePath.join(dataDir, "switchyard.db"))
          : PgClient.layer({ url: Redacted.make(databaseUrl), maxConnections: 1 })
      ),
      Effect.scoped
    )
  )

const ledgerOf = (dataDir: string, databaseUrl: string | undefined, keyHash?: string) =>
  query(dataDir, databaseUrl, (sql) =>
    Effect.map(
      keyHash === undefined
        ? sql<{ n: unknown; total: unknown }>`SELECT count(*) AS n, CAST(COALESCE(SUM(cost_nanos), 0) AS text) AS total FROM ledger`
        : sql<{ n: unknown; total: unknown }>`SELECT count(*) AS n, CAST(COALESCE(SUM(cost_nanos), 0) AS text) AS total FROM ledger
            WHERE key_id = (SELECT id FROM api_keys WHERE hash = ${keyHash})`,
      (rows) => ({ rows: Number(rows[0]!.n), nanos: BigInt(String(rows[0]!.total)) })
    ))

/** The ledger row count once it stopped moving (the gateways write rows in batches). */
const settledLedger = async (dataDir: string, databaseUrl: string | undefined) => {
  let last = await ledgerOf(dataDir, databaseUrl)
  for (;;) {
    await sleep(1_000)
    const now = await ledgerOf(dataDir, databaseUrl)
    if (now.rows === last.rows) return now
    last = now
  }
}

/** The same load at every gateway at once, the connections split between them. */
const loadAll = async (gateways: ReadonlyArray<Switchyard>, request: Omit<Load.LoadRequest, "connections" | "seconds">, apiKey: string, connections: number, seconds: number) => {
  const results = await Promise.all(gateways.map((g) =>
    Load.run({
      ...request,
      url: request.url.replace(/:\d+\//u, `:${g.port}/`),
      headers: { ...request.headers, authorization: `Bearer ${apiKey}` },
      connections: Math.max(1, Math.floor(connections / gateways.length)),
      seconds
    })
  ))
  return {
    ok: results.reduce((n, r) => n + r.okTotal, 0),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
    errors: results.reduce((n, r) => n + r.errors + r.timeouts, 0)
  }
}

const logDir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-money-rounds-"))
const dataDir = NodePath.join(logDir, "data")

await Harness.run({ logDir, store, serverUrl }, async (harness) => {
  // Every replica encrypts stored credentials with the same key.
  const secretKey = Crypto.randomBytes(32).toString("base64")
  const first = await startSwitchyard({
    name: "switchyard-a",
    logDir,
    dataDir,
    upstreamPort: harness.upstream.port,
    width,
    logLevel: "info",
    cache: false,
    ...(harness.databaseUrl !== undefined ? { databaseUrl: harness.databaseUrl, secretKey } : { env: { SWITCHYARD_WORKERS: "2" } })
  })
  harness.children.push(first)
  const gateways: Array<Switchyard> = [first]
  if (harness.databaseUrl !== undefined) {
    // A second replica on the same database: the same keys, the same secret key.
    const second = await startSwitchyard({
      name: "switchyard-b",
      logDir,
      dataDir: NodePath.join(logDir, "data-b"),
      upstreamPort: harness.upstream.port,
      width,
      logLevel: "info",
      cache: false,
      databaseUrl: harness.databaseUrl,
      secrets: { managementKey: first.managementKey, apiKey: first.apiKey },
      secretKey,
      fundLater: true
    })
    harness.children.push(second)
    gateways.push(second)
  }
  const { request } = await Harness.pricedSmall(harness, first)
  const rounds = Number(values.rounds)
  const seconds = Number(values.seconds)
  const idle = Number(values.idle)
  const before = await settledLedger(dataDir, harness.databaseUrl)
  log(`${store}: ${gateways.length === 1 ? "SWITCHYARD_WORKERS=2" : "two gateways on one database"}; ledger ${before.rows} rows before the load`)
  let ok = 0
  let non2xx = 0
  let errors = 0
  const periods = values["limit-only"] ? [] : [...Array.from({ length: rounds }, () => seconds), Number(values.final)]
  for (const [i, period] of periods.entries()) {
    if (i > 0) {
      log(`idle ${idle} s`)
      await sleep(idle * 1000)
    }
    const r = await loadAll(gateways, request, first.apiKey, 16, period)
    log(`round ${i + 1}: ${period} s c=16: ${r.ok} × 200, ${r.non2xx} non-2xx, ${r.errors} errors`)
    ok += r.ok
    non2xx += r.non2xx
    errors += r.errors
  }
  const after = await settledLedger(dataDir, harness.databaseUrl)
  const rows = after.rows - before.rows
  log(`client side: ${ok} × 200, ${non2xx} non-2xx, ${errors} errors; ledger rows written ${rows} (a round's end cuts off the answers in flight)`)
  // One to one: the generation id of every 200 the gateways logged, against the ledger's rows.
  const answered = new Set<string>()
  let served = 0
  let failed = 0
  for (const g of gateways) {
    for (const line of Fs.readFileSync(g.logPath, "utf8").split("\n")) {
      if (!line.startsWith("{")) continue
      const entry = JSON.parse(line) as Record<string, unknown> & { annotations?: Record<string, unknown> }
      const fields = { ...entry, ...entry.annotations }
      if (fields.status === undefined || !String(fields.path ?? fields.url ?? "").includes("embeddings")) continue
      if (Number(fields.status) === 200 && typeof fields.generation_id === "string") {
        served += 1
        answered.add(fields.generation_id)
      } else if (Number(fields.status) >= 300) failed += 1
    }
  }
  const ids = await query(dataDir, harness.databaseUrl, (sql) =>
    Effect.map(sql<{ id: string }>`SELECT generation_id AS id FROM ledger`, (r) => new Set(r.map((x) => x.id))))
  const unwritten = [...answered].filter((id) => !ids.has(id)).length
  const unanswered = [...ids].filter((id) => !answered.has(id)).length
  log(`server side: ${served} × 200 logged (${answered.size} generation ids), ${failed} not 2xx; ledger ${ids.size} rows: ` +
    `${unwritten} answered but not written, ${unanswered} written but not answered`)

  // A key with a limit of N requests' cost, spent through both processes at once.
  const perRequest = rows > 0 ? (after.nanos - before.nanos) / BigInt(rows) : before.nanos / BigInt(Math.max(1, before.rows))
  const requests = Number(values["limit-requests"])
  const limitNanos = perRequest * BigInt(requests)
  // What a request is admitted against: its worst case, from the gateway's own plan of it.
  const planned = await fetch(request.url.replace(/\/embeddings$/u, "/embeddings/plan"), {
    method: "POST",
    headers: { ...request.headers, authorization: `Bearer ${first.apiKey}`, "content-type": "application/json" },
    body: request.body
  })
  const plan = planned.ok ? ((await planned.json()) as { estimate?: { cost?: number } }) : undefined
  const worstNanos = plan?.estimate?.cost === undefined ? undefined : BigInt(Math.round(plan.estimate.cost * 1e9))
  log(`a request costs ${perRequest} nanos; its worst case (what admission reserves) is ${worstNanos ?? "?"} nanos`)
  const spendLimited = async (label: string, through: ReadonlyArray<Switchyard>) => {
    const created = await fetch(`${first.base}/keys`, {
      method: "POST",
      headers: { authorization: `Bearer ${first.managementKey}`, "content-type": "application/json" },
      body: JSON.stringify({ name: `limited ${label}`, limit: Number(limitNanos) / 1e9 })
    })
    if (!created.ok) throw new Error(`creating the limited key answered ${created.status}: ${await created.text()}`)
    const limited = (await created.json()) as { key: string }
    let spent = { ok: 0, non2xx: 0, errors: 0 }
    for (let pass = 0; pass < 10; pass++) {
      const r = await loadAll(through, request, limited.key, 16, 5)
      spent = { ok: spent.ok + r.ok, non2xx: spent.non2xx + r.non2xx, errors: spent.errors + r.errors }
      if (r.ok === 0) break
    }
    // Once the load stops, each process hands its unused lease back (5 s idle): one request at a
    // time, 9 s apart, through each process in turn, until every one refuses, takes what that returned.
    let dripped = 0
    for (let more = true; more;) {
      more = false
      for (const g of through) {
        // Past the idle hand-back of every lease: what any process held unused is the key's again.
        await sleep(9_000)
        const answer = await fetch(request.url.replace(/:\d+\//u, `:${g.port}/`), {
          method: "POST",
          headers: { ...request.headers, authorization: `Bearer ${limited.key}`, "content-type": "application/json" },
          body: request.body
        })
        const text = await answer.text()
        if (!answer.ok) log(`${label}: one at a time: ${answer.status} ${text.slice(0, 300)}`)
        if (answer.ok) {
          dripped += 1
          more = true
        }
      }
    }
    await sleep(3_000)
    const charged = await ledgerOf(dataDir, harness.databaseUrl, KeySecret.hash(limited.key))
    const held = await query(dataDir, harness.databaseUrl, (sql) =>
      sql<{ amount: unknown; owner: unknown }>`SELECT CAST(amount_nanos AS text) AS amount, owner FROM holds
        WHERE key_id = (SELECT id FROM api_keys WHERE hash = ${KeySecret.hash(limited.key)})`)
    log(`${label}: holds on the limited key now: ${held.map((h) => `${String(h.amount)} (${String(h.owner).slice(0, 8)})`).join(", ") || "none"}`)
    const current = await fetch(`${first.base}/key`, { headers: { authorization: `Bearer ${limited.key}` } })
    const remaining = current.ok ? ((await current.json()) as { data?: { limit_remaining?: number } }).data?.limit_remaining : undefined
    log(
      `limit ${limitNanos} nanos (${requests} requests of ${perRequest}) through ${label}: ${spent.ok} × 200 seen under load, ${spent.non2xx} refused, ` +
        `then ${dripped} × 200 one at a time 9 s apart; ` +
        `ledger ${charged.rows} rows, ${charged.nanos} nanos (${charged.nanos <= limitNanos ? "within" : "OVER"} the limit, ${limitNanos - charged.nanos} left` +
        `${worstNanos === undefined ? "" : limitNanos - charged.nanos < worstNanos ? ", less than one worst case" : ", MORE than one worst case"}); ` +
        `limit_remaining ${remaining}`
    )
  }
  if (gateways.length > 1) await spendLimited("one gateway", [first])
  await spendLimited(gateways.length > 1 ? "both gateways" : "both workers", gateways)
})
log(`logs in ${logDir}`)
