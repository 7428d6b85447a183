import * as Fs from "node:fs"
import * as Http from "node:http"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { type Cell, type CellId, cells as allCells, type Endpoints, requestFor, type TargetId, type TargetRequest, width } from "./Cells.ts"
import * as Matryoshka from "../../packages/core/src/vectors/Matryoshka.ts"
import * as OutputDtype from "../../packages/core/src/vectors/OutputDtype.ts"
import * as CliHelp from "./CliHelp.ts"
import * as FastUpstream from "./FastUpstream.ts"
import * as Load from "./Load.ts"
import * as OldBuild from "./OldBuild.ts"
import * as PgDatabase from "./PgDatabase.ts"
import * as ProcStats from "./ProcStats.ts"
import { type Child, repoRoot, sleep, startEffectFloor, startFloor, startPeer, startSwitchyard, startUpstream, type Switchyard, upstreamApiKey, upstreamModels } from "./Processes.ts"
import * as Profile from "./Profile.ts"
import * as QuantizerRecall from "./QuantizerRecall.ts"
import * as Report from "./Report.ts"

export interface BenchOptions {
  readonly seconds: number
  readonly runs: number
  readonly warmupSeconds: number
  readonly cells: ReadonlyArray<CellId>
  /** Only these targets (the upstream and the floor always run: every ratio needs them). */
  readonly targets: ReadonlyArray<TargetId> | undefined
  readonly databaseUrl: string | undefined
  readonly command: string
  readonly mode: "quick" | "full" | "custom"
  readonly serverMain: string | undefined
  /** A git ref whose server runs as the further target `switchyard-old` (built in a temporary worktree). */
  readonly oldServer: string | undefined
  /** Runs of `switchyard --help` to time from the installed CLI bundle (0: none). */
  readonly cliRuns: number
  /** Seconds every started process stays idle (after it went quiet) before the idle RSS is read. */
  readonly idleWaitSeconds: number
  readonly log: (line: string) => void
}

const maxInputs = 64
const slowMs = 20

interface Started {
  readonly children: Array<Child>
  readonly endpoints: Endpoints & { upstreamPort: number }
  readonly pids: Partial<Record<TargetId, number>>
  /** The log file of each target's process (its standard output and error). */
  readonly logs: Partial<Record<TargetId, string>>
  readonly cleanups: Array<() => Promise<void>>
  readonly workDir: string
  /** The Switchyard processes, funded only after their idle memory was read. */
  readonly gateways: Array<Switchyard>
}

const wanted = (options: BenchOptions): ReadonlySet<TargetId> => {
  const set = new Set<TargetId>()
  for (const cell of allCells) {
    if (!options.cells.includes(cell.id)) continue
    for (const target of cell.targets) set.add(target)
  }
  for (const target of set) {
    const always = target === "direct" || target === "floor"
    if (options.targets !== undefined && !always && !options.targets.includes(target)) set.delete(target)
    if ((target === "switchyard-pg" || target === "switchyard-pg-free") && options.databaseUrl === undefined) set.delete(target)
    if (target === "switchyard-old" && options.oldServer === undefined) set.delete(target)
  }
  return set
}

const startAll = async (options: BenchOptions, targets: ReadonlySet<TargetId>, started: Started, old: OldBuild.OldBuild | undefined) => {
  const { children, pids, logs, cleanups, workDir } = started
  const { ports, apiKeys } = started.endpoints
  const logDir = NodePath.join(workDir, "logs")
  const upstream = await startUpstream(logDir, { width, delays: { [upstreamModels.slow]: slowMs }, maxInputs })
  children.push(upstream)
  started.endpoints.upstreamPort = upstream.port
  options.log(`upstream on 127.0.0.1:${upstream.port}`)
  const floor = await startFloor(logDir, upstream.port)
  children.push(floor)
  ports.floor = floor.port
  pids.floor = floor.pid
  if (targets.has("effect-floor")) {
    const effectFloor = await startEffectFloor(logDir, upstream.port)
    children.push(effectFloor)
    ports["effect-floor"] = effectFloor.port
    pids["effect-floor"] = effectFloor.pid
  }
  if (targets.has("peer")) {
    const peer = await startPeer(logDir)
    children.push(peer)
    ports.peer = peer.port
    pids.peer = peer.pid
  }
  // One Switchyard serves several targets: its priced model, its zero-priced one, its cache.
  const addSwitchyard = async (
    name: "switchyard" | "switchyard-pg" | "switchyard-quiet" | "switchyard-old" | "switchyard-workers" | "switchyard-normal",
    store: string,
    databaseUrl?: string
  ) => {
    const sy = await startSwitchyard({
      name,
      logDir,
      dataDir: NodePath.join(workDir, name),
      upstreamPort: upstream.port,
      width,
      ...(databaseUrl !== undefined ? { databaseUrl } : {}),
      ...(name === "switchyard-old" && old !== undefined
        ? { main: old.main, startFlags: old.startFlags, startEnv: old.startEnv }
        : options.serverMain !== undefined
        ? { main: options.serverMain }
        : {}),
      logLevel: name === "switchyard-quiet" ? "warn" : "info",
      fundLater: true,
      ...(name === "switchyard-workers"
        ? { env: { SWITCHYARD_WORKERS: "2" } }
        : name === "switchyard-normal"
        ? { env: { SWITCHYARD_SQLITE_SYNCHRONOUS: "normal" } }
        : {})
    })
    children.push(sy)
    started.gateways.push(sy)
    const served = name === "switchyard"
      ? ["switchyard", "switchyard-free", "switchyard-cached"] as const
      : name === "switchyard-quiet" || name === "switchyard-old" || name === "switchyard-workers" || name === "switchyard-normal"
      ? [name] as const
      : [name, `${name}-free`] as const
    for (const t of served) {
      ports[t] = sy.port
      pids[t] = sy.pid
      apiKeys[t] = sy.apiKey
      logs[t] = sy.logPath
    }
    options.log(`Switchyard (${store}) on 127.0.0.1:${sy.port}`)
  }
  if (targets.has("switchyard") || targets.has("switchyard-free") || targets.has("switchyard-cached")) await addSwitchyard("switchyard", "SQLite")
  if (targets.has("switchyard-quiet")) await addSwitchyard("switchyard-quiet", "SQLite, SWITCHYARD_LOG_LEVEL=warn")
  if (targets.has("switchyard-workers")) await addSwitchyard("switchyard-workers", "SQLite, SWITCHYARD_WORKERS=2")
  if (targets.has("switchyard-normal")) await addSwitchyard("switchyard-normal", "SQLite, SWITCHYARD_SQLITE_SYNCHRONOUS=normal")
  if (targets.has("switchyard-old") && old !== undefined) await addSwitchyard("switchyard-old", `old build ${old.ref}, its own default store`)
  if ((targets.has("switchyard-pg") || targets.has("switchyard-pg-free")) && options.databaseUrl !== undefined) {
    const serverUrl = options.databaseUrl
    const databaseUrl = await PgDatabase.create(serverUrl)
    cleanups.push(() => PgDatabase.drop(serverUrl, databaseUrl).then(() => undefined))
    await addSwitchyard("switchyard-pg", "PostgreSQL", databaseUrl)
  }
}

/** Waits `ms`, asking each gateway's `/api/v1/health` once a second meanwhile. */
const probedIdle = async (gateways: ReadonlyArray<Switchyard>, ms: number) => {
  for (const end = Date.now() + ms; Date.now() < end;) {
    await Promise.all(gateways.map((g) => fetch(`${g.base}/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.arrayBuffer(), () => undefined)))
    await sleep(Math.min(1_000, Math.max(0, end - Date.now())))
  }
}

const accessLines = (logPath: string | undefined): number =>
  logPath === undefined ? 0 : (Fs.readFileSync(logPath, "utf8").match(/"message":"request"/gu) ?? []).length

/**
 * The access-log-off target measures something only if its process wrote no access line for its
 * validation request and the process with the access log on wrote them.
 */
const accessLogProblem = (logs: Partial<Record<TargetId, string>>): string | undefined => {
  if (accessLines(logs["switchyard-quiet"]) > 0) return "wrote access lines at SWITCHYARD_LOG_LEVEL=warn"
  if (accessLines(logs.switchyard) === 0) return "has nothing to compare with: the Switchyard process with the access log on wrote no access line"
  return undefined
}

/**
 * One request first: the target must answer 200 with exactly the upstream's vectors (every float,
 * or the same base64 text), and, when `cache` is given, say so in `x-switchyard-cache` (a
 * Switchyard target that goes upstream answers `bypass`, the cached one `hit`), else its numbers
 * would measure something else.
 */
export const validate = async (
  cell: Cell,
  request: TargetRequest,
  cache?: "hit" | "bypass",
  /** The most inputs of one upstream call: the fake upstream's vector is its item's place in the call. */
  perCall: number = maxInputs
): Promise<string | undefined> => {
  let answer = await post(request)
  if (typeof answer === "string") answer = await post(request)
  if (typeof answer === "string") return answer
  const { status, text } = answer
  if (status !== 200) return `answered ${status}: ${text.slice(0, 300)}`
  const outcome = answer.headers["x-switchyard-cache"]
  if (cache !== undefined && outcome !== cache) return `answered x-switchyard-cache: ${String(outcome)}, not ${cache}`
  let body: { data?: Array<{ embedding?: unknown; index?: number }> }
  try {
    body = JSON.parse(text)
  } catch {
    return "answered a body that is not JSON"
  }
  if (!Array.isArray(body.data) || body.data.length !== cell.inputs) return `answered ${body.data?.length ?? "no"} vectors for ${cell.inputs} inputs`
  // A vector the gateway cuts and types: the upstream's first one, cut and quantized as core does.
  if (cell.vector !== undefined && request.url.includes("/api/v1/")) {
    const expected = JSON.stringify(Array.from(OutputDtype.fromFloats(Matryoshka.cut(FastUpstream.vectorFor(0, width), cell.vector.dimensions), cell.vector.dtype)))
    return JSON.stringify(body.data[0]?.embedding) === expected ? undefined : `vector 0 is not the upstream's cut to ${cell.vector.dimensions} and made ${cell.vector.dtype}`
  }
  // A gateway that sends a request's inputs in pieces (Switchyard writes a large answer as its
  // pieces return, and splits a piece further at the endpoint's batch size) starts each upstream
  // call at the fake's first vector: walking the answer in order, every vector is the fake's vector
  // for its place in the current call, or the first vector of the next call, and no call holds
  // more than `perCall` items.
  const textOf = (vector: Array<number>) => cell.encoding === "base64" ? FastUpstream.base64Of(vector) : JSON.stringify(vector)
  const texts: Array<string> = []
  const wanted = (place: number) => texts[place] ??= textOf(FastUpstream.vectorFor(place, width))
  const first = wanted(0)
  let place = -1
  for (const [position, item] of body.data.entries()) {
    const index = item.index ?? position
    if (index !== position) return `vector ${position} carries index ${index}`
    const got = cell.encoding === "base64" ? item.embedding : Array.isArray(item.embedding) ? JSON.stringify(item.embedding) : undefined
    if (typeof got !== "string") return `vector ${index} is not ${cell.encoding === "base64" ? "base64 text" : "an array of floats"}`
    place = got === wanted(place + 1) && place + 1 < perCall ? place + 1 : got === first ? 0 : -1
    if (place === -1) return `vector ${index} ${cell.encoding === "base64" ? "is not the upstream's base64 text" : "differs from the upstream's"}`
  }
  return undefined
}

// A fresh connection each time: a kept-alive one may be closed by the server at the same moment.
const post = (request: TargetRequest): Promise<{ status: number; text: string; headers: Http.IncomingHttpHeaders } | string> =>
  new Promise((resolve) => {
    const body = Buffer.from(request.body)
    const outgoing = Http.request(request.url, {
      method: "POST",
      agent: false,
      headers: { "content-type": "application/json", "content-length": body.length, ...request.headers },
      timeout: 60_000
    }, (incoming) => {
      const chunks: Array<Buffer> = []
      incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
      incoming.on("end", () =>
        resolve({ status: incoming.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8"), headers: incoming.headers })
      )
      incoming.on("error", (error) => resolve(`the answer broke off: ${error.message}`))
    })
    outgoing.on("timeout", () => outgoing.destroy(new Error("no answer within 60 s")))
    outgoing.on("error", (error) => resolve(`request failed: ${error.message}`))
    outgoing.end(body)
  })

/**
 * Waits until the benchmark's processes are nearly idle (under 5 % of a core over 200 ms), at most
 * 15 s: a run that ends leaves requests in flight, and their work must not land in the next run.
 */
const quiesce = async (pids: ReadonlyArray<number>) => {
  const deadline = Date.now() + 15_000
  const total = () => pids.reduce((n, pid) => {
    try {
      return n + ProcStats.treeCpuMillis(pid)
    } catch {
      return n
    }
  }, 0)
  while (Date.now() < deadline) {
    const before = total()
    await sleep(200)
    if (total() - before <= 10) return
  }
}

const rotate = <A>(items: ReadonlyArray<A>, by: number): Array<A> =>
  items.length === 0 ? [] : items.map((_, i) => items[(i + by) % items.length]!)

const measureRun = async (
  cell: Cell,
  request: TargetRequest,
  seconds: number,
  pid: number | undefined,
  rssPeaks: Map<number, number>,
  metricsUrl: string | undefined,
  /** The target is a process with worker processes: its CPU and RSS are theirs summed with its own. */
  tree: boolean
): Promise<Load.LoadResult & { cpuMsPerRequest: number | undefined; statementsPerRequest: number | undefined }> => {
  const cpuMillis = tree ? ProcStats.treeCpuMillis : ProcStats.cpuMillis
  const rssBytes = tree ? ProcStats.treeRssBytes : ProcStats.rssBytes
  const statementsBefore = metricsUrl === undefined ? undefined : await storeStatements(metricsUrl)
  const cpuBefore = pid === undefined ? undefined : cpuMillis(pid)
  const sampler = pid === undefined ? undefined : setInterval(() => {
    try {
      rssPeaks.set(pid, Math.max(rssPeaks.get(pid) ?? 0, rssBytes(pid)))
    } catch {
      // the process is gone; the run reports its failures
    }
  }, 200)
  try {
    const result = await Load.run({ ...request, connections: cell.connections, seconds })
    const cpu = pid === undefined || cpuBefore === undefined ? undefined : cpuMillis(pid) - cpuBefore
    const statements = metricsUrl === undefined || statementsBefore === undefined ? undefined : await storeStatements(metricsUrl) - statementsBefore
    return {
      ...result,
      cpuMsPerRequest: cpu === undefined || result.okTotal === 0 ? undefined : cpu / result.okTotal,
      statementsPerRequest: statements === undefined || result.okTotal === 0 ? undefined : statements / result.okTotal
    }
  } finally {
    if (sampler !== undefined) clearInterval(sampler)
  }
}

/** Every SQL statement a Switchyard process's store ran so far, from its `/metrics`. */
const storeStatements = async (metricsUrl: string): Promise<number> => {
  const text = await (await fetch(metricsUrl)).text()
  let total = 0
  for (const match of text.matchAll(/^switchyard_store_statements_total\{[^}]*\} (\d+(?:\.\d+)?)$/gmu)) total += Number(match[1])
  return total
}

const stopAll = async (started: Started) => {
  await Promise.all(started.children.reverse().map((c) => c.stop().catch(() => undefined)))
  for (const cleanup of started.cleanups) await cleanup().catch(() => undefined)
}

/**
 * Starts every process, loads each cell's targets in interleaved rounds, and returns the report.
 * Every process is stopped (and the throw-away database dropped) whatever happens.
 */
export const run = async (options: BenchOptions): Promise<Report.Report> => {
  const startedAt = new Date().toISOString()
  // A pure computation, made before any process starts so it takes no core from the load.
  options.log("measuring the gateway's int8 and binary top-10 recall on generated vectors")
  const quantizer = QuantizerRecall.measure()
  const loadAverageAtStart = Os.loadavg()
  const targets = wanted(options)
  const workDir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-bench-"))
  const started: Started = {
    children: [],
    endpoints: { upstreamPort: 0, ports: {}, apiKeys: {}, upstreamApiKey },
    pids: {},
    logs: {},
    cleanups: [],
    gateways: [],
    workDir
  }
  const onSignal = () => {
    void stopAll(started).finally(() => process.exit(130))
  }
  process.once("SIGINT", onSignal)
  process.once("SIGTERM", onSignal)
  let failed = true
  try {
    // Before any other benchmark process starts: the command's launch has the machine to itself.
    const cliHelpMs = options.cliRuns > 0 ? await CliHelp.measure(options.cliRuns, options.log) : undefined
    // Built before any benchmark process starts; its worktree goes when they have stopped.
    const old = targets.has("switchyard-old") && options.oldServer !== undefined ? OldBuild.prepare(options.oldServer, options.log) : undefined
    if (old !== undefined) started.cleanups.push(async () => old.remove())
    await startAll(options, targets, started, old)
    // Idle after start: every process started, quiet, and left idle a while (V8 gives back the
    // heap start-up grew once it has been idle for some seconds), before any request.
    // The gateways have answered nothing but `/api/v1/health` so far, and are probed as an
    // operator's readiness probe would be (once a second) while they idle.
    await quiesce(started.children.map((c) => c.pid))
    await probedIdle(started.gateways, options.idleWaitSeconds * 1000)
    const idleRssMb: Partial<Record<TargetId, number>> = {}
    for (const target of ["switchyard", "switchyard-pg", "switchyard-old"] as const) {
      const pid = started.pids[target]
      if (pid !== undefined) idleRssMb[target] = ProcStats.rssBytes(pid) / 2 ** 20
    }
    options.log(`idle RSS ${options.idleWaitSeconds} s after start: ${Object.entries(idleRssMb).map(([t, mb]) => `${t} ${mb.toFixed(0)} MB`).join(", ")}`)
    for (const gateway of started.gateways) await gateway.fund()
    const samples: Array<Report.Sample> = []
    const summaries: Array<Report.CellSummary> = []
    let peakPerCell = true
    for (const cell of allCells.filter((c) => options.cells.includes(c.id))) {
      const skipped: Array<{ target: TargetId; reason: string }> = []
      const live: Array<TargetId> = []
      const requests = new Map<TargetId, TargetRequest>()
      for (const target of cell.targets.filter((t) => targets.has(t))) {
        const request = requestFor(cell, target, started.endpoints)
        // The cached target's first answer writes every item to the cache; the second must be a hit.
        const cached = target === "switchyard-cached"
        const problem = await validate(cell, request, cached ? undefined : target.startsWith("switchyard") ? "bypass" : undefined) ??
          (cached ? await validate(cell, request, "hit") : undefined) ??
          (target === "switchyard-quiet" ? accessLogProblem(started.logs) : undefined)
        if (problem !== undefined) {
          if (target === "direct" || target === "floor" || target === "switchyard") {
            throw new Error(`${cell.id}: ${target} ${problem}`)
          }
          skipped.push({ target, reason: problem })
          options.log(`${cell.id}: ${target} skipped: ${problem}`)
          continue
        }
        live.push(target)
        requests.set(target, request)
      }
      options.log(`${cell.id}: ${live.join(", ")}`)
      const everyPid = started.children.map((c) => c.pid)
      if (options.warmupSeconds > 0) {
        for (const target of live) {
          await Load.run({ ...requests.get(target)!, connections: cell.connections, seconds: options.warmupSeconds })
          await quiesce(everyPid)
        }
      }
      const rssPeaks = new Map<number, number>()
      const pidsOfCell = [...new Set(live.flatMap((t) => started.pids[t] === undefined ? [] : [started.pids[t]!]))]
      for (const pid of pidsOfCell) peakPerCell = ProcStats.resetPeak(pid) && peakPerCell
      for (let round = 0; round < options.runs; round++) {
        for (const target of rotate(live, round)) {
          const pid = started.pids[target]
          const port = started.endpoints.ports[target]
          // Each of several workers counts its own statements: only a single process's /metrics is the whole.
          const metricsUrl = target.startsWith("switchyard") && target !== "switchyard-workers" && port !== undefined
            ? `http://127.0.0.1:${port}/metrics`
            : undefined
          const result = await measureRun(cell, requests.get(target)!, options.seconds, pid, rssPeaks, metricsUrl, target === "switchyard-workers")
          samples.push({ ...result, cell: cell.id, target, run: round })
          await quiesce(everyPid)
          options.log(
            `${cell.id} round ${round + 1}/${options.runs} ${target}: ${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms${
              result.non2xx + result.errors + result.timeouts > 0 ? `, ${result.non2xx} non-2xx, ${result.errors} errors` : ""
            }`
          )
        }
      }
      const peaks: Partial<Record<TargetId, number>> = {}
      for (const target of live) {
        const pid = started.pids[target]
        if (pid === undefined) continue
        const sampled = rssPeaks.get(pid) ?? 0
        // Several processes have no one high-water mark: their sampled sum stands for it.
        peaks[target] = peakPerCell && target !== "switchyard-workers" ? Math.max(ProcStats.peakRssBytes(pid), sampled) : sampled
      }
      summaries.push(Report.summarise(cell, live, samples.filter((s) => s.cell === cell.id), peaks, skipped))
    }
    failed = false
    const cpus = Os.cpus()
    return {
      startedAt,
      finishedAt: new Date().toISOString(),
      command: options.command,
      mode: options.mode,
      settings: { seconds: options.seconds, runs: options.runs, warmupSeconds: options.warmupSeconds },
      machine: {
        cpus: cpus.length,
        cpuModel: cpus[0]?.model.trim() ?? "unknown",
        node: process.versions.node,
        loadAverageAtStart,
        peakRssPerCell: peakPerCell
      },
      cells: summaries,
      ...(old !== undefined ? { oldServer: { ref: old.ref, commit: old.commit } } : {}),
      idleRssMb,
      idleWaitSeconds: options.idleWaitSeconds,
      ...(cliHelpMs !== undefined ? { cliHelpMs } : {}),
      quantizer,
      checks: Report.checks(summaries, samples, idleRssMb, cliHelpMs, quantizer),
      samples
    }
  } finally {
    process.removeListener("SIGINT", onSignal)
    process.removeListener("SIGTERM", onSignal)
    await stopAll(started)
    if (failed) options.log(`logs of the processes are kept in ${NodePath.join(workDir, "logs")}`)
    else Fs.rmSync(workDir, { recursive: true, force: true })
  }
}

/**
 * Switchyard alone under one cell (small c=16 unless told) with V8's sampling profiler on; the
 * self time of each function afterwards. The `switchyard-cached` target is profiled with every
 * item cached (its validation request writes them).
 */
export const profile = async (options: {
  readonly cell?: CellId | undefined
  readonly target?: "switchyard" | "switchyard-cached" | undefined
  readonly seconds: number
  readonly outDir: string
  readonly serverMain: string | undefined
  readonly log: (line: string) => void
}) => {
  const workDir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-profile-"))
  const profileDir = NodePath.join(workDir, "cpu")
  const logDir = NodePath.join(workDir, "logs")
  const children: Array<Child> = []
  try {
    const upstream = await startUpstream(logDir, { width, delays: {}, maxInputs })
    children.push(upstream)
    const sy = await startSwitchyard({
      name: "switchyard",
      logDir,
      dataDir: NodePath.join(workDir, "switchyard"),
      upstreamPort: upstream.port,
      width,
      cpuProfileDir: profileDir,
      ...(options.serverMain !== undefined ? { main: options.serverMain } : {})
    })
    children.push(sy)
    const cell = allCells.find((c) => c.id === (options.cell ?? "small-c16"))!
    const target = options.target ?? "switchyard"
    const request = requestFor(cell, target, {
      upstreamPort: upstream.port,
      ports: { [target]: sy.port },
      apiKeys: { [target]: sy.apiKey },
      upstreamApiKey
    })
    const problem = (await validate(cell, request)) ?? (target === "switchyard-cached" ? await validate(cell, request, "hit") : undefined)
    if (problem !== undefined) throw new Error(`${target} ${problem}`)
    await Load.run({ ...request, connections: cell.connections, seconds: Math.min(2, options.seconds) })
    options.log(`profiling Switchyard for ${options.seconds} s under ${cell.label}`)
    const fromUs = Number(process.hrtime.bigint() / 1000n)
    const result = await Load.run({ ...request, connections: cell.connections, seconds: options.seconds })
    const toUs = Number(process.hrtime.bigint() / 1000n)
    options.log(`${Math.round(result.rps)} req/s, p50 ${result.p50.toFixed(2)} ms (with the profiler on)`)
    await sy.stop()
    const files = Fs.existsSync(profileDir) ? Fs.readdirSync(profileDir).filter((f) => f.endsWith(".cpuprofile")) : []
    if (files.length === 0) throw new Error("Switchyard wrote no CPU profile")
    const source = NodePath.join(profileDir, files.sort().at(-1)!)
    Fs.mkdirSync(options.outDir, { recursive: true })
    const kept = NodePath.join(options.outDir, `${target}-${cell.id}.cpuprofile`)
    Fs.copyFileSync(source, kept)
    const recorded = Profile.read(source)
    const window = recorded.startTime <= fromUs && fromUs <= recorded.endTime ? { fromUs, toUs } : undefined
    if (window === undefined) options.log("the profile's clock is not this process's: start-up is included")
    const analysis = Profile.analyse(recorded, repoRoot, window === undefined ? {} : { window })
    const text = [
      "# Switchyard CPU profile",
      "",
      `\`node --cpu-prof\` on the gateway process under ${cell.label} (${target}) for ${options.seconds} s${
        window === undefined ? " (start-up included)" : " (only the samples taken under load)"
      }: ${
        Math.round(result.rps)
      } req/s (${result.ok} requests) with the profiler on. Open \`${NodePath.relative(repoRoot, kept)}\` in Chrome DevTools for the call tree.`,
      "",
      Profile.markdown(analysis, "Main thread")
    ].join("\n")
    Fs.writeFileSync(NodePath.join(options.outDir, "profile.md"), `${text}\n`)
    return { analysis, markdown: text, requests: result.ok }
  } finally {
    await Promise.all(children.reverse().map((c) => c.stop().catch(() => undefined)))
    Fs.rmSync(workDir, { recursive: true, force: true })
  }
}
