/**
 * A batch against live calls, in one run: priced small c=16 live (the cache bypassed) for a
 * while, then a batch of `--lines` lines (one input each, the same model) through the Files and
 * Batch API, timed from `POST /batches` to `completed`, and the gateway's resident memory
 * sampled meanwhile. The default workspace has the embeddings cache off, so that both go
 * upstream for every input. Usage: `node src/batchBench.ts [lines] [live seconds]`.
 */
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { width } from "./Cells.ts"
import * as Harness from "./Harness.ts"
import * as Load from "./Load.ts"
import * as ProcStats from "./ProcStats.ts"
import { sleep, startSwitchyard } from "./Processes.ts"

const lines = Number(process.argv[2] ?? 5_000)
const liveSeconds = Number(process.argv[3] ?? 10)
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
  const live = await Load.run({ ...request, connections: 16, seconds: liveSeconds })

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

  const rssBefore = ProcStats.rssBytes(sy.pid)
  let rssPeak = rssBefore
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
  if (batch.request_counts.failed > 0) {
    const errors = await (await fetch(`${base}/files/${batch.error_file_id}/content`, { headers: { authorization } })).text()
    console.error(`first error line: ${errors.slice(0, errors.indexOf("\n"))}`)
  }
  const perSecond = batch.request_counts.completed / seconds
  const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(0)
  console.log(JSON.stringify({
    live: { connections: 16, seconds: liveSeconds, rps: Number(live.rps.toFixed(0)), ok: live.okTotal, non2xx: live.non2xx },
    batch: { lines, status: batch.status, counts: batch.request_counts, seconds: Number(seconds.toFixed(2)), linesPerSecond: Number(perSecond.toFixed(0)) },
    ratio: Number((perSecond / live.rps).toFixed(2)),
    rss: { beforeMb: Number(mb(rssBefore)), peakMb: Number(mb(rssPeak)), growthMb: Number(mb(rssPeak - rssBefore)) }
  }, null, 2))
})
Fs.rmSync(root, { recursive: true, force: true })
