import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { sqliteFile } from "../../apps/server/src/store/database/Database.ts"
import { width } from "./Cells.ts"
import * as Load from "./Load.ts"
import * as Harness from "./Harness.ts"
import * as PgServer from "./PgServer.ts"
import * as ProcStats from "./ProcStats.ts"
import { startSwitchyard } from "./Processes.ts"
import * as Seed from "./Seed.ts"
import type * as SoakReport from "./SoakReport.ts"

/**
 * Switchyard alone under priced small c=16 load (every request holds, settles and writes one
 * ledger row), in back-to-back periods (a soak's minutes, or rounds), on a store that is empty or
 * seeded with a ledger first. Per period: the gateway's CPU time and, on PostgreSQL, that of the
 * server processes working for its database (PgServer.ts), req/s, the gateway's RSS and the data's
 * size on disk.
 *
 * A seeded store is made by starting the gateway once on an empty one (migrations, bootstrap keys),
 * stopping it, seeding (Seed.ts) and starting it again on the same store with the same keys, so
 * the measured process never ran the seed.
 */
export interface SoakOptions {
  readonly store: "sqlite" | "postgres"
  /** The PostgreSQL server (`DATABASE_URL`); a throw-away database is made on it. */
  readonly serverUrl: string | undefined
  readonly rows: number
  readonly periodSeconds: number
  readonly periods: number
  readonly warmupSeconds: number
  readonly serverMain: string | undefined
  readonly unit: "minute" | "round"
  readonly log: (line: string) => void
  /** Called with each period as soon as it is measured. */
  readonly onPeriod?: (period: SoakReport.Period) => void
}

/** Bytes the embedded store takes on disk: its SQLite file and write-ahead log (allocated blocks, as `du` counts them). */
const sqliteBytes = (dataDir: string): number => {
  const file = sqliteFile(dataDir)
  let total = 0
  for (const path of [file, `${file}-wal`]) {
    try {
      total += Fs.statSync(path).blocks * 512
    } catch {
      // no log (yet, or checkpointed away)
    }
  }
  return total
}

export const run = async (options: SoakOptions): Promise<SoakReport.Series> => {
  const workDir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-soak-"))
  const logDir = NodePath.join(workDir, "logs")
  const dataDir = NodePath.join(workDir, "switchyard")
  let failed = true
  try {
    return await Harness.run({ logDir, store: options.store, serverUrl: options.serverUrl }, async (harness) => {
      const { upstream, databaseUrl, children } = harness
      const secretKey = Crypto.randomBytes(32).toString("base64")
      const start = (secrets?: { managementKey: string; apiKey: string }) =>
        startSwitchyard({
          name: "switchyard",
          logDir,
          dataDir,
          upstreamPort: upstream.port,
          width,
          ...(databaseUrl !== undefined ? { databaseUrl, secretKey } : {}),
          ...(options.serverMain !== undefined ? { main: options.serverMain } : {}),
          ...(secrets !== undefined ? { secrets } : {})
        })
      let sy = await start()
      children.push(sy)
      let seedMs: number | undefined
      if (options.rows > 0) {
        await sy.stop()
        children.pop()
        options.log(`seeding ${options.rows.toLocaleString("en")} ledger rows (${options.store})`)
        const seeded = databaseUrl !== undefined
          ? await Seed.seedPostgres(databaseUrl, { rows: options.rows })
          : await Seed.seedSqlite(sqliteFile(dataDir), { rows: options.rows })
        seedMs = seeded.milliseconds
        options.log(
          `seeded in ${(seeded.milliseconds / 1000).toFixed(1)} s${
            databaseUrl === undefined ? ` (${(seeded.cpuMs / 1000).toFixed(1)} s of CPU)` : ""
          } (${seeded.statementMs.map((ms) => (ms / 1000).toFixed(1)).join(" + ")} s by statement; ` +
            `${seeded.benchKeyRows.toLocaleString("en")} rows on the benchmark's key, ${seeded.holds} holds); the ledger takes ${
              (seeded.ledgerBytes / 2 ** 20).toFixed(0)
            } MB, ${(seeded.ledgerBytes / options.rows).toFixed(0)} bytes per row`
        )
        sy = await start({ managementKey: sy.managementKey, apiKey: sy.apiKey })
        children.push(sy)
      }
      options.log(`Switchyard (${options.store}) on 127.0.0.1:${sy.port}`)
      const { cell, request } = await Harness.pricedSmall(harness, sy)
      const server = await Harness.pgServer(harness, options.serverUrl)
      if (server === undefined && databaseUrl !== undefined) options.log("the PostgreSQL server's processes are not visible in /proc here: its CPU is not counted")
      const dataBytes = () => server !== undefined ? server.size() : Promise.resolve(sqliteBytes(dataDir))
      if (options.warmupSeconds > 0) await Load.run({ ...request, connections: cell.connections, seconds: options.warmupSeconds })
      const startRssMb = ProcStats.rssBytes(sy.pid) / 2 ** 20
      const startDataBytes = await dataBytes()
      const periods: Array<SoakReport.Period> = []
      for (let index = 1; index <= options.periods; index++) {
        const gatewayBefore = ProcStats.cpuMillis(sy.pid)
        const databaseBefore = server === undefined ? undefined : await server.cpu()
        const result = await Load.run({ ...request, connections: cell.connections, seconds: options.periodSeconds })
        const gatewayCpuMs = ProcStats.cpuMillis(sy.pid) - gatewayBefore
        const databaseCpuMs = server === undefined || databaseBefore === undefined ? undefined : PgServer.cpuBetween(databaseBefore, await server.cpu())
        const period: SoakReport.Period = {
          index,
          seconds: result.seconds + Math.min(options.periodSeconds / 5, 1),
          requests: result.okTotal,
          rps: result.rps,
          p50: result.p50,
          failures: result.non2xx + result.errors + result.timeouts,
          gatewayCpuMs,
          databaseCpuMs,
          rssMb: ProcStats.rssBytes(sy.pid) / 2 ** 20,
          dataBytes: await dataBytes()
        }
        periods.push(period)
        options.onPeriod?.(period)
        if (sy.exited()) throw new Error("Switchyard exited during the load")
      }
      failed = false
      return { store: options.store, seededRows: options.rows, seedMs, startRssMb, startDataBytes, periods }
    })
  } finally {
    if (failed) {
      Fs.rmSync(dataDir, { recursive: true, force: true })
      options.log(`logs of the processes are kept in ${logDir}`)
    } else Fs.rmSync(workDir, { recursive: true, force: true })
  }
}
