import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { repoRoot } from "../src/Processes.ts"
import * as Stages from "../src/Stages.ts"

const file = (path: string) => `file://${repoRoot}/${path}`
const effect = `file://${repoRoot}/node_modules/.pnpm/effect@4.1.0/node_modules/effect/dist/internal/effect.js`

/**
 * A small call tree: the HTTP server's run loop running the request fiber (plan, the run loop's own
 * steps), the ledger batch's fiber completing its waiters, which resumes a request fiber whose
 * response is written in the batch's stack, the upstream call's socket write, and GC.
 */
const nodes = [
  { id: 1, callFrame: { functionName: "(root)", url: "", lineNumber: -1 }, children: [2, 9, 10, 14] },
  { id: 2, callFrame: { functionName: "runLoop", url: effect, lineNumber: 450 }, children: [3, 5] },
  { id: 3, callFrame: { functionName: "compute", url: file("packages/core/src/routing/RoutePlan.ts"), lineNumber: 10 }, children: [4] },
  { id: 4, callFrame: { functionName: "toAtto", url: file("packages/core/src/catalog/Money.ts"), lineNumber: 5 }, children: [] },
  { id: 5, callFrame: { functionName: "makePrimitiveProto", url: effect, lineNumber: 100 }, children: [] },
  // the batch fiber: its own work, then a waiter resumed inside its stack
  { id: 9, callFrame: { functionName: "runLoop", url: effect, lineNumber: 450 }, children: [11] },
  { id: 11, callFrame: { functionName: "", url: file("apps/server/src/store/money/LedgerBatch.ts"), lineNumber: 110 }, children: [12] },
  { id: 12, callFrame: { functionName: "runLoop", url: effect, lineNumber: 450 }, children: [13] },
  { id: 13, callFrame: { functionName: "end", url: "node:_http_outgoing", lineNumber: 1 }, children: [15] },
  { id: 15, callFrame: { functionName: "writeHead", url: file("node_modules/@effect/platform-node/dist/NodeHttpServer.js"), lineNumber: 1 }, children: [16] },
  { id: 16, callFrame: { functionName: "writev", url: "", lineNumber: -1 }, children: [] },
  // the upstream call, from undici
  { id: 10, callFrame: { functionName: "_resume", url: file("node_modules/undici/lib/dispatcher/client.js"), lineNumber: 1 }, children: [17] },
  { id: 17, callFrame: { functionName: "writev", url: "", lineNumber: -1 }, children: [] },
  { id: 14, callFrame: { functionName: "(garbage collector)", url: "", lineNumber: -1 }, children: [] },
  { id: 18, callFrame: { functionName: "(idle)", url: "", lineNumber: -1 }, children: [] }
]
nodes[0]!.children.push(18)

describe("Stages", () => {
  it("gives each sample to the innermost telling frame of its own fiber, scaled to the main thread's CPU per request", () => {
    // (µs of self time) plan via a shared helper 100 + 100, run loop 200, batch 100, response write 300, upstream 100, gc 100, idle 1000
    const samples = [4, 3, 5, 11, 16, 17, 14, 18]
    const timeDeltas = [100, 100, 200, 100, 300, 100, 100, 1000]
    const profile = { startTime: 0, endTime: 2000, nodes, samples, timeDeltas }
    const result = Stages.attribute(profile, repoRoot, { requests: 10, mainThreadUsPerRequest: 500 })
    assert.strictEqual(result.busyMs, 1)
    const us = Object.fromEntries(result.rows.map((r) => [r.stage, r.usPerRequest]))
    // 1000 µs of busy samples; 500 µs of main-thread CPU per request: each µs of samples is 0.5 µs/req.
    assert.deepStrictEqual(us, {
      plan: 100,
      "upstream call": 50,
      "flush share": 50,
      write: 150,
      "effect runtime (no project frame)": 100,
      gc: 50
    })
    // The rows follow the stage order and name their heaviest functions.
    assert.deepStrictEqual(result.rows.map((r) => r.stage), ["plan", "upstream call", "flush share", "write", "effect runtime (no project frame)", "gc"])
    const plan = result.rows.find((r) => r.stage === "plan")!
    assert.deepStrictEqual(plan.top.map((f) => f.name), ["toAtto", "compute"])
    assert.closeTo(result.rows.reduce((s, r) => s + r.share, 0), 1, 1e-9)
    // Only the samples inside the window count.
    const early = Stages.attribute(profile, repoRoot, { requests: 1, mainThreadUsPerRequest: 100, window: { fromUs: 0, toUs: 200 } })
    assert.deepStrictEqual(early.rows.map((r) => [r.stage, r.usPerRequest]), [["plan", 100]])
  })

  it("reads a module serving several stages by function name, and passes over shared helpers", () => {
    const frame = (path: string, name: string) => ({ location: path, name, project: !path.startsWith("effect/") })
    assert.strictEqual(Stages.stageOf([frame("apps/server/src/store/money/AccountingLive.ts", "ledgerRow")]), "settle")
    assert.strictEqual(Stages.stageOf([frame("apps/server/src/store/money/AccountingLive.ts", "grant")]), "hold")
    // The embedded store's client and the money store's steps are the store's; the lease book (in memory) is the hold's.
    for (const module of ["sqlite/SqliteClient.ts", "money/SqliteMoneyStore.ts", "money/PgMoneyStore.ts", "money/MoneyStore.ts"]) {
      assert.strictEqual(Stages.stageOf([frame(`apps/server/src/store/${module}`, "run")]), "store: SQL engine and driver", module)
    }
    assert.strictEqual(Stages.stageOf([frame("apps/server/src/store/money/LeaseBook.ts", "take")]), "hold")
    assert.strictEqual(
      Stages.stageOf([frame("packages/core/src/catalog/Cost.ts", "compute"), frame("apps/server/src/embeddings/Settlement.ts", "")]),
      "settle"
    )
    assert.strictEqual(Stages.stageOf([frame("effect/dist/SchemaParser.js", "run"), frame("effect/dist/internal/effect.js", "runLoop")]), "decode")
    assert.strictEqual(Stages.stageOf([frame("packages/core/src/catalog/Cost.ts", "compute")]), "other")
  })
})

describe("Effect counters preload", () => {
  it("counts fibers, spans and run-loop steps of the server's effect only inside its window", async () => {
    const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-counters-"))
    const out = NodePath.join(dir, "counts.json")
    const script = `
      import { Effect, Fiber } from "effect"
      import * as Fs from "node:fs"
      const waitFor = async (phase) => { while (!Fs.existsSync(${JSON.stringify(out)}) || JSON.parse(Fs.readFileSync(${JSON.stringify(out)}, "utf8")).phase !== phase) await new Promise((r) => setTimeout(r, 5)) }
      const work = Effect.gen(function*() {
        const fibers = yield* Effect.forEach([1, 2, 3], (n) => Effect.forkChild(Effect.succeed(n)))
        for (const f of fibers) yield* Fiber.join(f)
      }).pipe(Effect.withSpan("a"), Effect.withSpan("b"))
      await Effect.runPromise(work)
      process.kill(process.pid, "SIGUSR2")
      await waitFor("started")
      await Effect.runPromise(work)
      process.kill(process.pid, "SIGUSR2")
      await waitFor("ended")
      await Effect.runPromise(work)
    `
    try {
      const child = spawn(process.execPath, ["--import", NodePath.join(repoRoot, "bench", "src", "effectCounters.ts"), "--input-type=module", "-e", script], {
        cwd: NodePath.join(repoRoot, "bench"),
        env: { ...process.env, BENCH_EFFECT_COUNTERS: out, BENCH_EFFECT_FROM: NodePath.join(repoRoot, "bench", "package.json") },
        stdio: ["ignore", "pipe", "pipe"]
      })
      let output = ""
      child.stderr.on("data", (chunk) => (output += chunk))
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
      assert.strictEqual(code, 0, output)
      const counts = JSON.parse(Fs.readFileSync(out, "utf8"))
      // One run: the main fiber and the three it forks; two spans; the window saw exactly one run.
      assert.strictEqual(counts.fibers, 4)
      assert.strictEqual(counts.spans, 2)
      assert.isAbove(counts.runLoopSteps, counts.runLoops)
      assert.isAbove(counts.contextChanges, 0)
      assert.isAbove(counts.heapAllocatedBytes, 0)
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
