// `pnpm bench [--quick] [--seconds N] [--runs N] [--warmup N] [--cells a,b] [--targets a,b]
//   [--cli-runs N] [--out DIR] [--summary FILE|none] [--no-pg] [--strict] [--profile] [--old-server REF]`
// `pnpm bench --soak [--minutes N] [--rows N] [--store sqlite,postgres]`
// `pnpm bench --rounds [--runs N] [--seconds N] [--rows N [--vs-empty]] [--store sqlite,postgres]`
// `pnpm bench --stages [--seconds N] [--store sqlite,postgres]`
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { parseArgs } from "node:util"
import * as BatchSection from "./BatchSection.ts"
import * as Bench from "./Bench.ts"
import * as CgroupBench from "./CgroupBench.ts"
import { type CellId, cells, type TargetId, targetLabels } from "./Cells.ts"
import * as ProcStats from "./ProcStats.ts"
import * as OldBuild from "./OldBuild.ts"
import { repoRoot } from "./Processes.ts"
import * as Report from "./Report.ts"
import * as Soak from "./Soak.ts"
import * as StageBench from "./StageBench.ts"
import * as SoakReport from "./SoakReport.ts"

const { values } = parseArgs({
  options: {
    quick: { type: "boolean", default: false },
    seconds: { type: "string" },
    runs: { type: "string" },
    warmup: { type: "string" },
    cells: { type: "string" },
    targets: { type: "string" },
    "cli-runs": { type: "string" },
    "idle-wait": { type: "string" },
    out: { type: "string" },
    summary: { type: "string" },
    "no-pg": { type: "boolean", default: false },
    strict: { type: "boolean", default: false },
    profile: { type: "boolean", default: false },
    soak: { type: "boolean", default: false },
    rounds: { type: "boolean", default: false },
    stages: { type: "boolean", default: false },
    cgroup: { type: "boolean", default: false },
    limits: { type: "string" },
    minutes: { type: "string" },
    rows: { type: "string" },
    store: { type: "string" },
    "vs-empty": { type: "boolean", default: false },
    server: { type: "string" },
    "old-server": { type: "string" },
    render: { type: "string" },
    help: { type: "boolean", default: false }
  },
  strict: true
})

// pnpm runs the script in bench/; paths on the command line are meant from where it was typed.
const invokedFrom = process.env.INIT_CWD ?? process.cwd()
const resolvePath = (path: string) => NodePath.resolve(invokedFrom, path)

const fail = (message: string): never => {
  console.error(message)
  process.exit(2)
}

if (values.help) {
  console.log(`pnpm bench [options]
  --quick            1 run of 1 s per target and cell (smoke); default: 3 runs of 5 s
  --seconds N        seconds per run          --runs N     runs per target and cell
  --warmup N         warm-up seconds per target and cell
  --cells a,b        among ${cells.map((c) => c.id).join(", ")}
  --targets a,b      among ${Object.keys(targetLabels).join(", ")} (direct and floor always run)
  --cli-runs N       runs of \`switchyard --help\` from the installed CLI bundle (default 10, 3 with --quick; 0: none)
  --idle-wait N      seconds the started processes stay idle before their idle RSS is read (default 30, 0 with --quick)
  --out DIR          where the JSON and Markdown go (default bench/results)
  --summary FILE     also write the Markdown there (default bench/RESULTS.md for a full run; "none" to skip)
  --no-pg            ignore DATABASE_URL (otherwise Switchyard also runs on that PostgreSQL server)
  --strict           exit 1 when a target of the issue is missed
  --profile          profile Switchyard (node --cpu-prof) under small c=16 instead (or the first of
                     --cells, with --targets switchyard-cached: every item cached)
  --soak             Switchyard alone under priced small c=16 for --minutes N (default 30) on a ledger
                     seeded with --rows N rows (default 1000000; 0: empty); prints CPU/req, req/s,
                     RSS and data size each minute, then first vs last minute and the RSS growth
  --rounds           the same load in --runs N rounds (default 6) of --seconds N (default 20), from
                     an empty store (or --rows N seeded); checks round N against round 1
  --vs-empty         with --rounds and --rows: also run the rounds on an empty store and compare
  --stages           CPU µs per request of each stage of a priced embeddings request (V8 profile of
                     the gateway under small c=16, or the first of --cells: small-c1, for --seconds N, default 10) and the Effect
                     runtime's counters per request
  --cgroup           the gateway inside a memory cgroup of each of --limits MB (default 512,256; as
                     root): first start on an empty data dir and restart (ms to the first answer),
                     idle RSS after --idle-wait N s (default 30), then small, large and base64 c=16
                     for --seconds N each (default 10): statuses, alive or killed, the cgroup's peak
  --store a,b        the stores of --soak, --rounds, --stages: sqlite (default), postgres (DATABASE_URL)
  --server FILE      run this Switchyard entry point instead of apps/server/src/main.ts (compare a change)
  --old-server REF   side by side: also run the server of git ref REF (e.g. the last commit before the
                     SQLite store) as the target switchyard-old, built in a temporary git worktree
                     (packages from the local pnpm store where it has them) and started with that
                     build's own start flags, in the same interleaved rounds; the worktree is removed after
  --render FILE      print (and with --summary, write) the Markdown of an earlier JSON result`)
  process.exit(0)
}

const number = (name: string, text: string | undefined, fallback: number, min: number, max: number): number => {
  if (text === undefined) return fallback
  const value = Number(text)
  if (!Number.isFinite(value) || value < min || value > max) fail(`--${name} must be a number from ${min} to ${max}`)
  return value
}

const list = <A extends string>(name: string, text: string | undefined, known: ReadonlyArray<A>): ReadonlyArray<A> | undefined => {
  if (text === undefined) return undefined
  const items = text.split(",").map((s) => s.trim()).filter((s) => s !== "")
  for (const item of items) if (!known.includes(item as A)) fail(`--${name}: unknown ${item}; known: ${known.join(", ")}`)
  return items as Array<A>
}

if (values.render !== undefined) {
  const text = Report.markdown(JSON.parse(Fs.readFileSync(resolvePath(values.render), "utf8")) as Report.Report)
  if (values.summary !== undefined && values.summary !== "none") Fs.writeFileSync(resolvePath(values.summary), `${text}\n`)
  console.log(text)
  process.exit(0)
}

if (!ProcStats.available()) fail("The benchmark reads CPU time and memory from /proc: it runs on Linux only.")

const quick = values.quick
const seconds = number("seconds", values.seconds, values.profile ? 10 : quick ? 1 : 5, 0.1, 600)
const runs = Math.round(number("runs", values.runs, quick ? 1 : 3, 1, 20))
const warmupSeconds = number("warmup", values.warmup, quick ? 0.5 : 1, 0, 60)
const cliRuns = Math.round(number("cli-runs", values["cli-runs"], quick ? 3 : 10, 0, 100))
const idleWaitSeconds = number("idle-wait", values["idle-wait"], quick ? 0 : 30, 0, 600)
const cellIds = list("cells", values.cells, cells.map((c) => c.id)) ?? cells.map((c) => c.id)
const targets = list("targets", values.targets, Object.keys(targetLabels) as Array<TargetId>)
const outDir = values.out === undefined ? NodePath.join(repoRoot, "bench", "results") : resolvePath(values.out)
const databaseUrl = values["no-pg"] ? undefined : process.env.DATABASE_URL?.trim() || undefined
const custom = values.server !== undefined || values.seconds !== undefined || values.runs !== undefined || values.warmup !== undefined ||
  values.cells !== undefined || values.targets !== undefined || values["cli-runs"] !== undefined
const mode = quick ? "quick" : custom ? "custom" : "full"
const summaryPath = values.summary === "none"
  ? undefined
  : values.summary !== undefined
  ? resolvePath(values.summary)
  : mode === "full"
  ? NodePath.join(repoRoot, "bench", "RESULTS.md")
  : undefined
const serverMain = values.server === undefined ? undefined : resolvePath(values.server)
if (serverMain !== undefined && !Fs.existsSync(serverMain)) fail(`--server: no file ${serverMain}`)
const oldServer = values["old-server"]
if (oldServer !== undefined) {
  if (values.soak || values.rounds || values.stages || values.cgroup || values.profile) fail("--old-server is for the side-by-side mode (no --soak, --rounds, --stages, --cgroup or --profile)")
  try {
    OldBuild.resolveRef(oldServer)
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error))
  }
}
const command = [...(databaseUrl !== undefined ? ["DATABASE_URL=postgres://…"] : []), "pnpm bench", ...process.argv.slice(2)].join(" ")
const log = (line: string) => console.error(`[bench] ${line}`)

const stores = (list("store", values.store, ["sqlite", "postgres"] as const) ?? ["sqlite"]) as ReadonlyArray<"sqlite" | "postgres">
if (stores.includes("postgres") && databaseUrl === undefined) fail("--store postgres needs DATABASE_URL (and no --no-pg)")

if (values.soak || values.rounds) {
  const soak = values.soak
  const kind = soak ? "soak" : "rounds"
  const rows = Math.round(number("rows", values.rows, soak ? 1_000_000 : 0, 0, 100_000_000))
  const periods = soak ? Math.round(number("minutes", values.minutes, 30, 1, 24 * 60)) : Math.round(number("runs", values.runs, 6, 2, 100))
  const periodSeconds = soak ? 60 : number("seconds", values.seconds, 20, 0.5, 600)
  if (values["vs-empty"] && (soak || rows === 0)) fail("--vs-empty compares --rounds on a seeded ledger (--rows N) with an empty one")
  const unit = soak ? "minute" : "round"
  const series: Array<SoakReport.Series> = []
  const comparisons: Array<string> = []
  for (const store of stores) {
    const once = (seeded: number) =>
      Soak.run({
        store,
        serverUrl: databaseUrl,
        rows: seeded,
        periodSeconds,
        periods,
        warmupSeconds: values.warmup === undefined ? (soak ? 5 : 1) : warmupSeconds,
        serverMain,
        unit,
        log,
        onPeriod: (period) => console.log(SoakReport.periodLine({ store }, period, unit))
      })
    const measured = await once(rows)
    series.push(measured)
    if (values["vs-empty"]) {
      const empty = await once(0)
      series.push(empty)
      const comparison = SoakReport.compare(measured, empty)
      comparisons.push(`### ${SoakReport.storeLabel(store)}: seeded against empty`, "", ...SoakReport.barsTable(comparison.bars), "")
    }
  }
  const load = soak ? `${periods} min` : `${periods} rounds of ${periodSeconds} s`
  const text = [
    `## Switchyard ${kind}: priced small c=16, ${load}`,
    "",
    `\`${command}\` on ${new Date().toISOString().slice(0, 10)}, ${Os.cpus().length} × ${Os.cpus()[0]?.model.trim() ?? "unknown"}, load average ${
      Os.loadavg().map((x) => x.toFixed(2)).join(" / ")
    } at the end. CPU ms/req is the gateway process's user + system time over its successful requests; on PostgreSQL the second figure adds every server process working for its database (its connections, autovacuum on it, and the shared checkpointer, writers and postmaster). Data is the SQLite file and its WAL or \`pg_database_size\`.`,
    "",
    ...series.map((s) => `${SoakReport.markdown(s, kind)}\n`),
    ...comparisons
  ].join("\n")
  Fs.mkdirSync(outDir, { recursive: true })
  const stamp = new Date().toISOString().replace(/[:.]/gu, "-")
  Fs.writeFileSync(NodePath.join(outDir, `${kind}-${stamp}.json`), `${JSON.stringify({ command, series }, null, 2)}\n`)
  Fs.writeFileSync(NodePath.join(outDir, `${kind}-${stamp}.md`), `${text}\n`)
  if (values.summary !== undefined && values.summary !== "none") Fs.writeFileSync(resolvePath(values.summary), `${text}\n`)
  console.log(`\n${text}`)
  process.exit(0)
}

if (values.cgroup) {
  const limitsMb = (values.limits ?? "512,256").split(",").map((l) => number("limits", l.trim(), 512, 64, 65536))
  const workDir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-bench-cgroup-"))
  try {
    const outcomes = await CgroupBench.run({
      limitsMb,
      seconds: number("seconds", values.seconds, 10, 1, 600),
      idleWaitSeconds: number("idle-wait", values["idle-wait"], 30, 0, 600),
      workDir,
      serverMain,
      log
    })
    const text = [
      "## Switchyard in a memory cgroup (a container's limit), embedded store",
      "",
      `\`${command}\` on ${new Date().toISOString().slice(0, 10)}, load average ${Os.loadavg().map((x) => x.toFixed(2)).join(" / ")} at the end. Each limit is a fresh memory cgroup (no swap) holding only the gateway; the load generator and the fake upstream run outside it. "2xx" and "other status" count every answer of the cell's run. "cell's peak" is the cgroup's high-water mark during that cell alone (reset before it; cgroup v1 only), "cgroup peak" the whole run's, starts included.`,
      "",
      ...CgroupBench.markdown(outcomes)
    ].join("\n")
    Fs.mkdirSync(outDir, { recursive: true })
    const stamp = new Date().toISOString().replace(/[:.]/gu, "-")
    Fs.writeFileSync(NodePath.join(outDir, `cgroup-${stamp}.json`), `${JSON.stringify({ command, outcomes }, null, 2)}\n`)
    Fs.writeFileSync(NodePath.join(outDir, `cgroup-${stamp}.md`), `${text}\n`)
    if (values.summary !== undefined && values.summary !== "none") Fs.writeFileSync(resolvePath(values.summary), `${text}\n`)
    console.log(`\n${text}`)
  } finally {
    Fs.rmSync(workDir, { recursive: true, force: true })
  }
  process.exit(0)
}

if (values.stages) {
  const named = values.cells === undefined ? "small-c16" : values.cells.split(",")[0]
  if (named !== "small-c1" && named !== "small-c16") fail("--stages runs small-c1 or small-c16 (--cells)")
  const stageCell: "small-c1" | "small-c16" = named === "small-c1" ? "small-c1" : "small-c16"
  const results: Array<StageBench.StageResult> = []
  for (const store of stores) {
    results.push(await StageBench.run({ store, serverUrl: databaseUrl, seconds: number("seconds", values.seconds, 10, 1, 600), cell: stageCell, outDir, serverMain, log }))
  }
  const text = [
    `## Switchyard stage by stage: priced ${stageCell === "small-c1" ? "small c=1" : "small c=16"}`,
    "",
    `\`${command}\` on ${new Date().toISOString().slice(0, 10)}, load average ${Os.loadavg().map((x) => x.toFixed(2)).join(" / ")} at the end. CPU µs per request of each stage: its share of the main thread's samples in a V8 CPU profile (\`--cpu-prof\`) under load, each sample given to the stage of the innermost frame on its stack that tells one (bench/src/Stages.ts), times the main thread's CPU time per request read from /proc (the profile's times are wall time). The profiler and the Effect counters (a \`--import\` preload, bench/src/effectCounters.ts) cost some CPU themselves: compare runs of this mode with each other, not with \`pnpm bench\`.`,
    "",
    StageBench.markdown(results)
  ].join("\n")
  Fs.mkdirSync(outDir, { recursive: true })
  Fs.writeFileSync(NodePath.join(outDir, "stages.md"), `${text}\n`)
  Fs.writeFileSync(NodePath.join(outDir, "stages.json"), `${JSON.stringify({ command, results }, null, 2)}\n`)
  if (values.summary !== undefined && values.summary !== "none") Fs.writeFileSync(resolvePath(values.summary), `${text}\n`)
  console.log(text)
  process.exit(0)
}

if (values.profile) {
  // The first cell and Switchyard target named, if any: `--cells large-c16 --targets switchyard-cached`.
  const target = targets?.find((t) => t === "switchyard" || t === "switchyard-cached") as "switchyard" | "switchyard-cached" | undefined
  const result = await Bench.profile({ cell: values.cells === undefined ? undefined : cellIds[0], target, seconds, outDir, serverMain, log })
  console.log(result.markdown)
  process.exit(0)
}

const perCell = cells.filter((c) => cellIds.includes(c.id)).reduce((n, c) => n + c.targets.length, 0)
// An old build is checked out, installed and built first (minutes when its packages come online).
const budgetSeconds = perCell * (runs * (seconds + 1.5) + warmupSeconds + 2) + 300 + cliRuns * 5 + idleWaitSeconds + (oldServer !== undefined ? 900 : 0)
const watchdog = setTimeout(() => {
  log(`the benchmark ran past its ${Math.round(budgetSeconds)} s budget: stopping`)
  process.kill(process.pid, "SIGTERM")
}, budgetSeconds * 1000)
watchdog.unref()

const report = await Bench.run({
  seconds,
  runs,
  warmupSeconds,
  cells: cellIds as ReadonlyArray<CellId>,
  targets,
  databaseUrl,
  command,
  mode,
  serverMain,
  oldServer,
  cliRuns,
  idleWaitSeconds,
  log
})
clearTimeout(watchdog)

const text = Report.markdown(report)
Fs.mkdirSync(outDir, { recursive: true })
const stamp = report.finishedAt.replace(/[:.]/gu, "-")
Fs.writeFileSync(NodePath.join(outDir, `bench-${stamp}.json`), `${JSON.stringify(report, null, 2)}\n`)
Fs.writeFileSync(NodePath.join(outDir, `bench-${stamp}.md`), `${text}\n`)
Fs.writeFileSync(NodePath.join(outDir, "latest.json"), `${JSON.stringify(report, null, 2)}\n`)
Fs.writeFileSync(NodePath.join(outDir, "latest.md"), `${text}\n`)
// The batch cell's section (written by `pnpm --filter @switchyard/bench batch`) stays.
if (summaryPath !== undefined) {
  const previous = Fs.existsSync(summaryPath) ? Fs.readFileSync(summaryPath, "utf8") : undefined
  Fs.writeFileSync(summaryPath, BatchSection.keep(previous, `${text}\n`))
}
console.log(text)
log(`wrote ${NodePath.join(outDir, "latest.json")} and latest.md${summaryPath !== undefined ? ` and ${summaryPath}` : ""}`)
if (values.strict && report.checks.some((c) => c.holds === false)) process.exit(1)
process.exit(0)
