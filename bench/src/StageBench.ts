import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { width } from "./Cells.ts"
import * as Load from "./Load.ts"
import * as Harness from "./Harness.ts"
import * as PgServer from "./PgServer.ts"
import * as ProcStats from "./ProcStats.ts"
import { repoRoot, sleep, startSwitchyard } from "./Processes.ts"
import * as Profile from "./Profile.ts"
import * as Stages from "./Stages.ts"

/**
 * `pnpm bench --stages`: Switchyard alone under priced small c=16, with V8's CPU profiler on and
 * the Effect counters preloaded (effectCounters.ts), on one store. The profile's samples taken in a
 * first window of load are attributed to stages (Stages.ts), scaled to the main thread's CPU per
 * request; the counters count in a second window (their methods are in place only then).
 */
interface EffectCounts {
  readonly runLoopSteps: number
  readonly runLoops: number
  readonly contextChanges: number
  readonly fibers: number
  readonly spans: number
  readonly heapAllocatedBytes: number
  readonly gcs: number
  /** The requests served in the counters' window. */
  readonly requests: number
}

export interface StageResult {
  readonly store: "sqlite" | "postgres"
  readonly requests: number
  readonly rps: number
  readonly seconds: number
  /** The gateway's CPU (every thread, from /proc) per request, µs. */
  readonly processUsPerRequest: number
  /** Its main thread's (JavaScript, and the work V8 and Node do on it), µs. */
  readonly mainThreadUsPerRequest: number
  /** The PostgreSQL processes working for the gateway's database, per request, µs (PostgreSQL only). */
  readonly databaseUsPerRequest: number | undefined
  readonly attribution: Stages.Attribution
  readonly counters: EffectCounts | undefined
  /** Where the profile was kept. */
  readonly profilePath: string
}

const preload = NodePath.join(repoRoot, "bench", "src", "effectCounters.ts")

const waitFor = async (path: string, phase: string): Promise<Record<string, unknown>> => {
  const deadline = Date.now() + 10_000
  while (Date.now() < deadline) {
    try {
      const read = JSON.parse(Fs.readFileSync(path, "utf8")) as Record<string, unknown>
      if (read.phase === phase) return read
    } catch {
      // not written yet
    }
    await sleep(20)
  }
  throw new Error(`the Effect counters preload did not answer (${phase})`)
}

export const run = async (options: {
  readonly store: "sqlite" | "postgres"
  readonly serverUrl: string | undefined
  readonly seconds: number
  readonly cell: "small-c1" | "small-c16"
  readonly outDir: string
  readonly serverMain: string | undefined
  readonly log: (line: string) => void
}): Promise<StageResult> => {
  const workDir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-stages-"))
  const logDir = NodePath.join(workDir, "logs")
  const profileDir = NodePath.join(workDir, "cpu")
  const countersPath = NodePath.join(workDir, "effect-counters.json")
  try {
    return await Harness.run({ logDir, store: options.store, serverUrl: options.serverUrl }, async (harness) => {
      const { upstream, databaseUrl, children } = harness
      const sy = await startSwitchyard({
        name: "switchyard",
        logDir,
        dataDir: NodePath.join(workDir, "switchyard"),
        upstreamPort: upstream.port,
        width,
        cpuProfileDir: profileDir,
        nodeFlags: ["--import", preload],
        env: {
          BENCH_EFFECT_COUNTERS: countersPath,
          ...(options.serverMain !== undefined ? { BENCH_EFFECT_FROM: options.serverMain } : {})
        },
        ...(databaseUrl !== undefined ? { databaseUrl, secretKey: Crypto.randomBytes(32).toString("base64") } : {}),
        // The sources, not the bundle: stages are told apart by the files their frames come from.
        main: options.serverMain ?? NodePath.join(repoRoot, "apps", "server", "src", "main.ts")
      })
      children.push(sy)
      const { cell, request } = await Harness.pricedSmall(harness, sy, options.cell)
      const server = await Harness.pgServer(harness, options.serverUrl)
      await Load.run({ ...request, connections: cell.connections, seconds: Math.min(3, options.seconds) })
      options.log(`profiling Switchyard (${options.store}) for ${options.seconds} s under ${cell.label}`)
      const fromUs = Number(process.hrtime.bigint() / 1000n)
      const cpuBefore = ProcStats.cpuMillis(sy.pid)
      const mainBefore = ProcStats.threadCpuMillis(sy.pid, sy.pid)
      const databaseBefore = server === undefined ? undefined : await server.cpu()
      const result = await Load.run({ ...request, connections: cell.connections, seconds: options.seconds })
      const cpuMs = ProcStats.cpuMillis(sy.pid) - cpuBefore
      const mainMs = ProcStats.threadCpuMillis(sy.pid, sy.pid) - mainBefore
      const databaseMs = server === undefined || databaseBefore === undefined ? undefined : PgServer.cpuBetween(databaseBefore, await server.cpu())
      const toUs = Number(process.hrtime.bigint() / 1000n)
      options.log(`${Math.round(result.rps)} req/s, ${result.okTotal} requests (with the profiler on)`)
      // A second window, outside the profiled one, with the Effect counters on.
      const countSeconds = Math.min(options.seconds, 5)
      process.kill(sy.pid, "SIGUSR2")
      await waitFor(countersPath, "started")
      const counted = await Load.run({ ...request, connections: cell.connections, seconds: countSeconds })
      process.kill(sy.pid, "SIGUSR2")
      const ended = await waitFor(countersPath, "ended")
      await sy.stop()
      children.pop()
      const files = Fs.existsSync(profileDir) ? Fs.readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile")) : []
      if (files.length === 0) throw new Error("Switchyard wrote no CPU profile")
      const recorded = Profile.read(NodePath.join(profileDir, files.sort().at(-1)!))
      if (!(recorded.startTime <= fromUs && fromUs <= recorded.endTime)) throw new Error("the profile's clock is not this process's: the load's samples cannot be told apart")
      Fs.mkdirSync(options.outDir, { recursive: true })
      const profilePath = NodePath.join(options.outDir, `stages-${options.store}.cpuprofile`)
      Fs.copyFileSync(NodePath.join(profileDir, files.sort().at(-1)!), profilePath)
      const requests = result.okTotal
      const count = (key: Exclude<keyof EffectCounts, "requests">): number => {
        const value = ended[key]
        if (typeof value !== "number") throw new Error(`the Effect counters file has no number ${key}`)
        return value
      }
      const counters: EffectCounts = {
        runLoopSteps: count("runLoopSteps"),
        runLoops: count("runLoops"),
        contextChanges: count("contextChanges"),
        fibers: count("fibers"),
        spans: count("spans"),
        heapAllocatedBytes: count("heapAllocatedBytes"),
        gcs: count("gcs"),
        requests: counted.okTotal
      }
      return {
        store: options.store,
        requests,
        rps: result.rps,
        seconds: (toUs - fromUs) / 1e6,
        processUsPerRequest: (cpuMs * 1000) / requests,
        mainThreadUsPerRequest: (mainMs * 1000) / requests,
        databaseUsPerRequest: databaseMs === undefined ? undefined : (databaseMs * 1000) / requests,
        attribution: Stages.attribute(recorded, repoRoot, { requests, mainThreadUsPerRequest: (mainMs * 1000) / requests, window: { fromUs, toUs } }),
        counters,
        profilePath
      }
    })
  } finally {
    Fs.rmSync(workDir, { recursive: true, force: true })
  }
}

const us = (x: number | undefined) => x === undefined || !Number.isFinite(x) ? "–" : x.toFixed(0)
const per = (n: number, requests: number, digits = 1) => requests === 0 ? "–" : (n / requests).toFixed(digits)

/** The stage table, a column per store, then each store's totals, counters and attribution check. */
export const markdown = (results: ReadonlyArray<StageResult>): string => {
  const label = (r: StageResult) => r.store === "sqlite" ? "SQLite" : "PostgreSQL"
  const used = Stages.stages.filter((stage) => results.some((r) => r.attribution.rows.some((row) => row.stage === stage)))
  const cell = (r: StageResult, stage: Stages.Stage) => {
    const row = r.attribution.rows.find((x) => x.stage === stage)
    return row === undefined ? "0" : `${us(row.usPerRequest)} (${(row.share * 100).toFixed(1)} %)`
  }
  const lines = [
    `| stage | ${results.map((r) => `${label(r)} µs/req (share)`).join(" | ")} |`,
    `|---|${results.map(() => "---|").join("")}`,
    ...used.map((stage) => `| ${stage} | ${results.map((r) => cell(r, stage)).join(" | ")} |`),
    `| **main thread (/proc)** | ${results.map((r) => `**${us(r.mainThreadUsPerRequest)}**`).join(" | ")} |`,
    `| other threads (GC helpers, compiler, libuv pool) | ${results.map((r) => us(r.processUsPerRequest - r.mainThreadUsPerRequest)).join(" | ")} |`,
    `| **gateway process (/proc)** | ${results.map((r) => `**${us(r.processUsPerRequest)}**`).join(" | ")} |`,
    ...(results.some((r) => r.databaseUsPerRequest !== undefined)
      ? [`| PostgreSQL processes for its database (/proc) | ${results.map((r) => us(r.databaseUsPerRequest)).join(" | ")} |`]
      : []),
    "",
    "Effect runtime per request (a second window of load, the counting preload on; see bench/src/effectCounters.ts):",
    "",
    `| counter | ${results.map(label).join(" | ")} |`,
    `|---|${results.map(() => "---|").join("")}`,
    ...([
      ["run-loop steps", "runLoopSteps"],
      ["run-loop entries", "runLoops"],
      ["context changes", "contextChanges"],
      ["fibers", "fibers"],
      ["spans", "spans"]
    ] as const).map(([name, key]) => `| ${name} | ${results.map((r) => r.counters === undefined ? "–" : per(r.counters[key], r.counters.requests)).join(" | ")} |`),
    `| JS heap allocated, KB | ${results.map((r) => r.counters === undefined ? "–" : per(r.counters.heapAllocatedBytes / 1024, r.counters.requests)).join(" | ")} |`,
    "",
    ...results.flatMap((r) => [
      `${label(r)}: ${r.requests} requests in ${r.seconds.toFixed(1)} s (${Math.round(r.rps)} req/s with the profiler and counters on); profile kept in \`${
        NodePath.relative(repoRoot, r.profilePath)
      }\`. The functions with the most self time in each row:`,
      "",
      "| stage | functions (self ms) |",
      "|---|---|",
      ...r.attribution.rows.map((row) =>
        `| ${row.stage} | ${row.top.map((f) => `\`${f.name}\` ${f.location === "" ? "" : `${f.location.replace(/^.*node_modules\//u, "")} `}${f.selfMs.toFixed(0)}`).join("; ")} |`
      ),
      ""
    ])
  ]
  return lines.join("\n")
}
