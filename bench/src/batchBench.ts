/**
 * A batch against live calls, in one run: priced small c=16 live (the cache bypassed) for a
 * while, then a batch of `--lines` lines (one input each, the same model) through the Files and
 * Batch API, timed from `POST /batches` to `completed`, and the gateway's resident memory
 * sampled meanwhile. The default workspace has the embeddings cache off, so that both go
 * upstream for every input. Beside the rates: the gateway's CPU per live request and per batch
 * line (their ratio is disturbed least by other work on the machine), and what the batch asked of
 * the store. Usage: `pnpm --filter @switchyard/bench batch [lines] [live seconds]`.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { parseArgs } from "node:util"
import * as BatchSection from "./BatchSection.ts"
import { width } from "./Cells.ts"
import * as Harness from "./Harness.ts"
import * as Load from "./Load.ts"
import * as ProcStats from "./ProcStats.ts"
import { sleep, startSwitchyard } from "./Processes.ts"

const { values: flags, positionals } = parseArgs({ allowPositionals: true, options: { summary: { type: "string" } } })
const lines = Number(positionals[0] ?? 5_000)
const liveSeconds = Number(positionals[1] ?? 10)
const loadAtStart = Os.loadavg()
let loadAtBatch = loadAtStart
const root = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-batch-bench-"))
const logDir = NodePath.join(root, "logs")
Fs.mkdirSync(logDir, { recursive: true })

await Harness.run({ logDir, store: "sqlite", serverUrl: undefined }, async (harness) => {
  const sy = await startSwitchyard({
    name: "switchyard",
    logDir,
    dataDir: NodePath.join(root, "data"),
    upstreamPort: harness.upstream.port,
    width,
    logLevel: "warn",
    cache: false,
    // The fake upstream takes at most 64 inputs a call, and the bench's catalog says so: a unit
    // (256 lines by default) is cut into calls of 64, sent at once.
    env: { ...(process.env.BATCH_BENCH_UNIT_LINES !== undefined ? { SWITCHYARD_BATCH_UNIT_LINES: process.env.BATCH_BENCH_UNIT_LINES } : {}), ...(process.env.BATCH_BENCH_WORKERS !== undefined ? { SWITCHYARD_BATCH_WORKERS: process.env.BATCH_BENCH_WORKERS } : {}) },
    ...(process.env.BATCH_BENCH_PROFILE !== undefined ? { cpuProfileDir: process.env.BATCH_BENCH_PROFILE } : {})
  })
  harness.children.push(sy)
  const base = `http://127.0.0.1:${sy.port}/api/v1`
  const authorization = `Bearer ${sy.apiKey}`
  const { request } = await Harness.pricedSmall(harness, sy)
  const liveCpu = ProcStats.cpuMillis(sy.pid)
  const live = await Load.run({ ...request, connections: 16, seconds: liveSeconds })
  const liveCpuMs = ProcStats.cpuMillis(sy.pid) - liveCpu

  const body = JSON.parse(request.body) as Record<string, unknown>
  const text = Array.from({ length: lines }, (_, i) =>
    JSON.stringify({
      custom_id: `line-${i}`,
      method: "POST",
      url: "/v1/embeddings",
      body: { ...body, input: `Document ${i} of the batch: the quick brown fox jumps over the lazy dog.` }
    })).join("\n")
  const form = new FormData()
  form.append("purpose", "batch")
  form.append("file", new Blob([text]), "bench.jsonl")
  const uploaded = await fetch(`${base}/files`, { method: "POST", headers: { authorization }, body: form })
  if (!uploaded.ok) throw new Error(`upload answered ${uploaded.status}: ${await uploaded.text()}`)
  const file = await uploaded.json() as { readonly id: string }

  const metricsUrl = `http://127.0.0.1:${sy.port}/metrics`
  const before = await storeFigures(metricsUrl)
  const rssBefore = ProcStats.rssBytes(sy.pid)
  let rssPeak = rssBefore
  loadAtBatch = Os.loadavg()
  const batchCpu = ProcStats.cpuMillis(sy.pid)
  const started = performance.now()
  const created = await fetch(`${base}/batches`, {
    method: "POST",
    headers: { authorization, "content-type": "application/json" },
    body: JSON.stringify({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
  })
  if (!created.ok) throw new Error(`batch create answered ${created.status}: ${await created.text()}`)
  const { id } = await created.json() as { readonly id: string }
  let batch: { status: string; request_counts: { total: number; completed: number; failed: number }; error_file_id?: string | null }
  for (;;) {
    rssPeak = Math.max(rssPeak, ProcStats.rssBytes(sy.pid))
    batch = await (await fetch(`${base}/batches/${id}`, { headers: { authorization } })).json() as typeof batch
    if (batch.status === "completed" || batch.status === "failed") break
    await sleep(100)
  }
  const seconds = (performance.now() - started) / 1000
  const batchCpuMs = ProcStats.cpuMillis(sy.pid) - batchCpu
  const after = await storeFigures(metricsUrl)
  if (batch.request_counts.failed > 0) {
    const errors = await (await fetch(`${base}/files/${batch.error_file_id}/content`, { headers: { authorization } })).text()
    console.error(`first error line: ${errors.slice(0, errors.indexOf("\n"))}`)
  }
  const perSecond = batch.request_counts.completed / seconds
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)
  const figures = {
    live: { connections: 16, seconds: liveSeconds, rps: Number(live.rps.toFixed(0)), ok: live.okTotal, non2xx: live.non2xx, cpuMsPerRequest: Number((liveCpuMs / live.okTotal).toFixed(3)) },
    batch: { lines, status: batch.status, counts: batch.request_counts, seconds: Number(seconds.toFixed(2)), linesPerSecond: Number(perSecond.toFixed(0)), cpuMsPerLine: Number((batchCpuMs / batch.request_counts.completed).toFixed(3)) },
    ratio: Number((perSecond / live.rps).toFixed(2)),
    // The gateway's CPU per live request over its CPU per batch line: the ratio the machine's load disturbs least.
    cpuRatio: Number(((liveCpuMs / live.okTotal) / (batchCpuMs / batch.request_counts.completed)).toFixed(2)),
    loadAverage: Os.loadavg().map((n) => Number(n.toFixed(2))),
    store: {
      statements: Object.fromEntries(Object.entries(after.statements).map(([kind, n]) => [kind, n - (before.statements[kind] ?? 0)]).filter(([, n]) => n !== 0)),
      ledgerFlushes: after.flushes - before.flushes,
      ledgerRows: after.rows - before.rows
    },
    rss: { beforeMb: Number(mb(rssBefore)), peakMb: Number(mb(rssPeak)), growthMb: Number(mb(rssPeak - rssBefore)) }
  }
  console.log(JSON.stringify(figures, null, 2))
  if (flags.summary !== undefined) {
    const path = NodePath.resolve(process.env.INIT_CWD ?? process.cwd(), flags.summary)
    const previous = Fs.existsSync(path) ? Fs.readFileSync(path, "utf8") : ""
    Fs.writeFileSync(path, BatchSection.replace(previous, section(figures)))
    console.error(`[batch] wrote the batch section of ${path}`)
  }
})
interface Figures {
  readonly live: { readonly rps: number; readonly cpuMsPerRequest: number }
  readonly batch: { readonly lines: number; readonly seconds: number; readonly linesPerSecond: number; readonly cpuMsPerLine: number; readonly status: string }
  readonly ratio: number
  readonly cpuRatio: number
  readonly loadAverage: ReadonlyArray<number>
  readonly store: { readonly statements: Record<string, number>; readonly ledgerFlushes: number; readonly ledgerRows: number }
  readonly rss: { readonly beforeMb: number; readonly peakMb: number; readonly growthMb: number }
}

/** The figures as RESULTS.md's batch section: issue 39's two bars, then what explains them. */
function section(f: Figures): string {
  const verdict = (holds: boolean) => (holds ? "holds" : "**missed**")
  const load = (l: ReadonlyArray<number>) => l.map((n) => n.toFixed(2)).join(" / ")
  const cpu = Os.cpus()
  const statements = Object.entries(f.store.statements).map(([kind, n]) => `${kind} ${n}`).join(", ")
  return [
    BatchSection.heading,
    "",
    `Produced by \`pnpm --filter @switchyard/bench batch ${lines} ${liveSeconds} --summary bench/RESULTS.md\` on ${
      new Date().toISOString().slice(0, 10)
    }: ${cpu.length} × ${cpu[0]?.model ?? "CPU"}, Node ${process.versions.node}; load average ${load(loadAtStart)} when the live phase started, ${
      load(loadAtBatch)
    } when the batch started and ${
      load(f.loadAverage)
    } at the end. Other work shared the machine: the higher the load, and the more it differs between the two phases, the less the ratio of their rates says; the gateway's CPU per request and per line are disturbed least.`,
    "",
    `Switchyard as \`pnpm start\` runs it, on the embedded store (SQLite), the embeddings cache off: first the priced small request (1 input, 1536 floats) live at c=16 for ${liveSeconds} s, then a batch of ${lines} lines of the same body (one input each, every line a different text) through the Files and Batch API, timed from \`POST /batches\` to \`completed\`, the gateway's RSS sampled every 100 ms meanwhile. The fake upstream takes 64 inputs a call, as the catalog's \`max_batch_items\` says: a unit of 256 lines is one attempt of 4 calls.`,
    "",
    "| target | measured | limit | result |",
    "|---|---|---|---|",
    `| batch lines/s ÷ live c=16 req/s (one run) | ${f.ratio.toFixed(2)} (${f.batch.linesPerSecond} vs ${f.live.rps}) | ≥ 5 | ${verdict(f.ratio >= 5)} |`,
    `| RSS growth during the batch (peak − before), MB | ${f.rss.growthMb} (${f.rss.peakMb} − ${f.rss.beforeMb}) | ≤ 100 | ${verdict(f.rss.growthMb <= 100)} |`,
    "",
    "| figure | value |",
    "|---|---|",
    `| batch | ${f.batch.status}, ${f.batch.lines} lines in ${f.batch.seconds} s |`,
    `| gateway CPU per live request ÷ per batch line | ${f.cpuRatio.toFixed(2)} (${f.live.cpuMsPerRequest} ms vs ${f.batch.cpuMsPerLine} ms) |`,
    `| ledger writes during the batch | ${f.store.ledgerFlushes} transactions for ${f.store.ledgerRows} rows |`,
    `| store statements during the batch, by kind | ${statements} |`,
    ""
  ].join("\n")
}

/** The store's statements by kind, and its batched ledger writes (how many, how many rows), from `/metrics`. */
async function storeFigures(url: string) {
  const text = await (await fetch(url)).text()
  const statements: Record<string, number> = {}
  for (const match of text.matchAll(/^switchyard_store_statements_total\{kind="([^"]*)"\} (\d+(?:\.\d+)?)$/gmu)) statements[match[1]!] = Number(match[2])
  const one = (name: string) => Number(new RegExp(`^${name} (\\d+(?:\\.\\d+)?)$`, "mu").exec(text)?.[1] ?? 0)
  return { statements, flushes: one("switchyard_store_batch_rows_count"), rows: one("switchyard_store_batch_rows_sum") }
}

Fs.rmSync(root, { recursive: true, force: true })
