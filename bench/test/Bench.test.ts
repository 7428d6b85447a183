import { assert, describe, it } from "@effect/vitest"
import { spawn } from "node:child_process"
import * as Http from "node:http"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { validate } from "../src/Bench.ts"
import { cells, requestFor } from "../src/Cells.ts"
import * as EffectFloor from "../src/EffectFloor.ts"
import * as FastUpstream from "../src/FastUpstream.ts"
import * as PassThrough from "../src/PassThrough.ts"
import * as Profile from "../src/Profile.ts"
import * as OldBuild from "../src/OldBuild.ts"
import { benchModels, effectFloorApiKey, repoRoot, startEnvOf, startFlagsOf, upstreamModels } from "../src/Processes.ts"
import * as Report from "../src/Report.ts"
import type * as SoakReport from "../src/SoakReport.ts"

const sample = (target: Report.Sample["target"], run: number, rps: number, p50: number): Report.Sample => ({
  cell: "small-c16",
  target,
  run,
  ok: rps,
  okTotal: rps,
  non2xx: 0,
  statuses: {},
  errors: 0,
  timeouts: 0,
  seconds: 1,
  rps,
  p50,
  p90: p50,
  p99: p50,
  bytes: 0,
  cpuMsPerRequest: target === "direct" ? undefined : 0.5
})

describe("Report", () => {
  it("takes ratios run by run, then their median and range", () => {
    const samples = [
      sample("direct", 0, 1000, 1), sample("floor", 0, 800, 1.5), sample("switchyard", 0, 400, 3),
      sample("direct", 1, 500, 2), sample("floor", 1, 400, 2.5), sample("switchyard", 1, 300, 4),
      sample("direct", 2, 1000, 1), sample("floor", 2, 1000, 1.2), sample("switchyard", 2, 100, 9)
    ]
    const cell = Report.summarise({ id: "small-c16", label: "small", connections: 16 }, ["direct", "floor", "switchyard"], samples, {}, [])
    const sy = cell.targets.find((t) => t.target === "switchyard")!
    assert.deepStrictEqual(sy.vsFloor, { median: 0.5, min: 0.1, max: 0.75 })
    assert.deepStrictEqual(sy.addedP50, { median: 2, min: 2, max: 8 })
    assert.deepStrictEqual(sy.rps, { median: 300, min: 100, max: 400 })
    const checks = Report.checks([cell], samples, { switchyard: 210 })
    const c16 = checks.find((c) => c.id === "small-c16-vsFloor-switchyard")!
    assert.strictEqual(c16.value, 0.5)
    assert.isTrue(c16.holds)
    const idle = checks.find((c) => c.id === "idle-rss-switchyard")!
    assert.strictEqual(idle.value, 210)
    assert.isFalse(idle.holds)
    // CPU per request against the floor's: 0.5 ms each here.
    const cpu = checks.find((c) => c.id === "small-c16-cpu-switchyard")!
    assert.strictEqual(cpu.value, 1)
    assert.isTrue(cpu.holds)
  })

  it("checks the RSS growth under load (highest peak less idle) against the floor's highest peak", () => {
    const samples = [sample("direct", 0, 1000, 1), sample("floor", 0, 800, 1.5), sample("switchyard", 0, 400, 3)]
    const cell = Report.summarise({ id: "small-c16", label: "small", connections: 16 }, ["direct", "floor", "switchyard"], samples, {
      floor: 100 * 2 ** 20,
      switchyard: 380 * 2 ** 20
    }, [])
    const growth = (idle: number) => Report.checks([cell], samples, { switchyard: idle }).find((c) => c.id === "rss-growth-switchyard")!
    assert.strictEqual(growth(190).value, 1.9)
    assert.isTrue(growth(190).holds)
    assert.isFalse(growth(170).holds)
  })

  it("says a target was not measured rather than inventing a value", () => {
    const cell = Report.summarise({ id: "small-c1", label: "small", connections: 1 }, ["direct", "floor", "switchyard"], [
      { ...sample("direct", 0, 100, 1), cell: "small-c1" },
      { ...sample("floor", 0, 90, 0.9), cell: "small-c1" },
      { ...sample("switchyard", 0, 50, 2), cell: "small-c1" }
    ], {}, [])
    const check = Report.checks([cell], []).find((c) => c.id === "small-c1-added-p50-switchyard")!
    assert.isUndefined(check.value)
    assert.isUndefined(check.holds)
    assert.include(Report.checksTable([check]), "not measured")
  })
})

describe("SWITCHYARD_WORKERS=2 (issue 36)", () => {
  it("holds two workers' req/s to 1.5× one worker's, run by run in the same rounds, and only where both ran", () => {
    const samples = [
      sample("direct", 0, 1000, 1), sample("floor", 0, 800, 1.5), sample("switchyard", 0, 400, 3), sample("switchyard-workers", 0, 700, 2),
      sample("direct", 1, 1000, 1), sample("floor", 1, 800, 1.5), sample("switchyard", 1, 300, 3), sample("switchyard-workers", 1, 420, 2)
    ]
    const cell = Report.summarise({ id: "small-c16", label: "small", connections: 16 }, ["direct", "floor", "switchyard", "switchyard-workers"], samples, {}, [])
    const check = Report.checks([cell], samples).find((c) => c.id === "small-c16-workers-2")!
    // Runs 1.75 and 1.4: the median of the ratios, not the ratio of the medians.
    assert.closeTo(check.value!, 1.575, 1e-9)
    assert.isTrue(check.holds)
    const slow = samples.map((s) => s.target === "switchyard-workers" ? { ...s, rps: s.rps / 2 } : s)
    assert.isFalse(Report.checks([cell], slow).find((c) => c.id === "small-c16-workers-2")!.holds)
    const alone = samples.filter((s) => s.target !== "switchyard-workers")
    assert.isUndefined(Report.checks([cell], alone).find((c) => c.id === "small-c16-workers-2"))
    assert.include(cells.find((c) => c.id === "small-c16")!.targets, "switchyard-workers")
  })
})

describe("the old build (--old-server REF)", () => {
  it("compares the default's CPU per request and idle RSS with the old build's in the same run, and names its ref", () => {
    const samples = [
      sample("direct", 0, 1000, 1), sample("floor", 0, 800, 1.5),
      { ...sample("switchyard", 0, 400, 3), cpuMsPerRequest: 0.6 }, { ...sample("switchyard-old", 0, 300, 4), cpuMsPerRequest: 1.2 }
    ]
    const cell = Report.summarise({ id: "small-c16", label: "small", connections: 16 }, ["direct", "floor", "switchyard", "switchyard-old"], samples, {}, [])
    const checks = Report.checks([cell], samples, { switchyard: 90, "switchyard-old": 250 })
    const cpu = checks.find((c) => c.id === "small-c16-cpu-vs-old-build")!
    assert.strictEqual(cpu.value, 0.5)
    assert.isTrue(cpu.holds)
    assert.strictEqual(checks.find((c) => c.id === "idle-rss-vs-old-build")!.value, 90 / 250)
    assert.isFalse(checks.find((c) => c.id === "idle-rss-switchyard-old")!.holds)
    const worse = Report.checks([cell], samples, { switchyard: 300, "switchyard-old": 250 }).find((c) => c.id === "idle-rss-vs-old-build")!
    assert.isFalse(worse.holds)
    // Without the old build, no before/after.
    const alone = Report.summarise({ id: "small-c16", label: "small", connections: 16 }, ["direct", "floor", "switchyard"], samples.slice(0, 3), {}, [])
    assert.isUndefined(Report.checks([alone], samples.slice(0, 3)).find((c) => c.id === "small-c16-cpu-vs-old-build"))
    const report: Report.Report = {
      startedAt: "2026-11-27T00:00:00Z",
      finishedAt: "2026-11-27T00:01:00Z",
      command: "pnpm bench --old-server v0.1.0",
      mode: "custom",
      settings: { seconds: 1, runs: 1, warmupSeconds: 0 },
      machine: { cpus: 2, cpuModel: "x", node: "24", loadAverageAtStart: [0, 0, 0], peakRssPerCell: true },
      cells: [cell],
      oldServer: { ref: "v0.1.0", commit: "0123456789abcdef0123456789abcdef01234567" },
      checks,
      samples
    }
    assert.include(Report.markdown(report), "| Switchyard, old build (v0.1.0) |")
    assert.include(Report.markdown(report), "commit 0123456789ab")
  })

  it("runs the old build with the Node flags and environment of its own start script", () => {
    const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-bench-flags-"))
    try {
      Fs.writeFileSync(NodePath.join(dir, "package.json"), JSON.stringify({ scripts: { start: "trap '' INT && node --max-semi-space-size=8 --v8-pool-size=1 dist/main.mjs" } }))
      assert.deepStrictEqual(startFlagsOf(dir), ["--max-semi-space-size=8", "--v8-pool-size=1"])
      assert.deepStrictEqual(startEnvOf(dir), {})
      Fs.writeFileSync(NodePath.join(dir, "package.json"), JSON.stringify({ scripts: { start: "node dist/main.mjs" } }))
      assert.deepStrictEqual(startFlagsOf(dir), [])
      Fs.writeFileSync(NodePath.join(dir, "package.json"), JSON.stringify({ scripts: { start: "trap '' INT && MALLOC_ARENA_MAX=1 node --v8-pool-size=1 dist/main.mjs" } }))
      assert.deepStrictEqual(startEnvOf(dir), { MALLOC_ARENA_MAX: "1" })
      assert.deepStrictEqual(startFlagsOf(dir), ["--v8-pool-size=1"])
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("refuses a ref that names no commit, before anything starts", async () => {
    assert.throws(() => OldBuild.resolveRef("no-such-ref-anywhere"), /names no commit/)
    assert.match(OldBuild.resolveRef("HEAD"), /^[0-9a-f]{40}$/u)
    const child = spawn(process.execPath, ["src/main.ts", "--old-server", "no-such-ref-anywhere"], { cwd: NodePath.join(repoRoot, "bench"), stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stderr.on("data", (chunk) => (output += chunk))
    const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
    assert.strictEqual(code, 2)
    assert.include(output, "names no commit")
  })
})

describe("Report: the all-hits cell", () => {
  it("checks, run by run, that every item cached serves twice the req/s of the same requests going upstream", () => {
    const samples = [
      sample("switchyard", 0, 100, 10), sample("switchyard-cached", 0, 250, 4),
      sample("switchyard", 1, 120, 9), sample("switchyard-cached", 1, 200, 5),
      sample("switchyard", 2, 90, 11), sample("switchyard-cached", 2, 190, 5)
    ].map((s) => ({ ...s, cell: "large-c16" as const }))
    const check = Report.checks([], samples).find((c) => c.id === "large-c16-cache-hits")!
    assert.strictEqual(check.value, 190 / 90)
    assert.isTrue(check.holds)
    const short = Report.checks([], samples.map((s) => s.target === "switchyard-cached" ? { ...s, rps: s.rps / 2 } : s))
      .find((c) => c.id === "large-c16-cache-hits")!
    assert.isFalse(short.holds)
    assert.isUndefined(Report.checks([], samples.filter((s) => s.target === "switchyard")).find((c) => c.id === "large-c16-cache-hits"))
  })

  it("sends the same body to the cached target and the one going upstream; only the latter bypasses the cache", () => {
    const cell = cells.find((c) => c.id === "large-c16")!
    const endpoints = { upstreamPort: 1, ports: { switchyard: 2, "switchyard-cached": 2 }, apiKeys: {}, upstreamApiKey: "k" }
    const upstream = requestFor(cell, "switchyard", endpoints)
    const cached = requestFor(cell, "switchyard-cached", endpoints)
    assert.strictEqual(cached.body, upstream.body)
    assert.strictEqual(upstream.headers["x-switchyard-cache"], "bypass")
    assert.isUndefined(cached.headers["x-switchyard-cache"])
  })
})

describe("Report: the access log's cost", () => {
  const run = (target: Report.Sample["target"], round: number, rps: number, cpu: number): Report.Sample => ({
    ...sample(target, round, rps, 10),
    cpuMsPerRequest: cpu
  })

  it("checks, run by run, the CPU ms/req with access lines over the same process without them", () => {
    const samples = [
      run("switchyard", 0, 950, 1.03), run("switchyard-quiet", 0, 1000, 1.0),
      run("switchyard", 1, 900, 1.2), run("switchyard-quiet", 1, 1000, 1.0),
      run("switchyard", 2, 1000, 1.0), run("switchyard-quiet", 2, 1000, 1.0)
    ]
    const check = Report.checks([], samples).find((c) => c.id === "small-c16-access-log")!
    assert.closeTo(check.value!, 3, 1e-9)
    assert.isTrue(check.holds)
    const cost = Report.accessLogCost(samples)!
    assert.deepStrictEqual(
      [cost.rpsPercent.median, cost.rpsPercent.min, cost.rpsPercent.max].map((x) => Math.round(x * 1e6) / 1e6),
      [5, 0, 10]
    )
    assert.strictEqual(check.note, "CPU ms/req 1.030 with, 1.000 without, runs 0.0 to 20.0 %; req/s given up 5.0 %, runs 0.0 to 10.0 % (information)")
    const costly = Report.checks([], samples.map((s) => s.target === "switchyard" ? { ...s, cpuMsPerRequest: s.cpuMsPerRequest! * 1.1 } : s))
      .find((c) => c.id === "small-c16-access-log")!
    assert.isFalse(costly.holds)
  })

  it("is absent without the access-log-off target, and not measured without CPU figures", () => {
    const on = [run("switchyard", 0, 950, 1.03)]
    assert.isUndefined(Report.checks([], on).find((c) => c.id === "small-c16-access-log"))
    const noCpu = [...on, { ...run("switchyard-quiet", 0, 1000, 1), cpuMsPerRequest: undefined }]
    const check = Report.checks([], noCpu).find((c) => c.id === "small-c16-access-log")!
    assert.isUndefined(check.holds)
  })

  it("sends the access-log-off target the same request as Switchyard's priced target", () => {
    const cell = cells.find((c) => c.id === "small-c16")!
    assert.include(cell.targets, "switchyard-quiet")
    const endpoints = { upstreamPort: 1, ports: { switchyard: 2, "switchyard-quiet": 3 }, apiKeys: { switchyard: "a", "switchyard-quiet": "b" }, upstreamApiKey: "k" }
    const on = requestFor(cell, "switchyard", endpoints)
    const off = requestFor(cell, "switchyard-quiet", endpoints)
    assert.strictEqual(off.body, on.body)
    assert.strictEqual(off.headers["x-switchyard-cache"], "bypass")
    assert.strictEqual(off.url, "http://127.0.0.1:3/api/v1/embeddings")
  })
})

describe("Report: switchyard --help", () => {
  it("checks the median of the timed runs against 500 ms and shows their range", () => {
    const check = Report.checks([], [], {}, [180, 620, 240, 200, 210]).find((c) => c.id === "cli-help-ms")!
    assert.strictEqual(check.value, 210)
    assert.isTrue(check.holds)
    assert.strictEqual(check.note, "180–620 ms over 5 runs")
    assert.isFalse(Report.checks([], [], {}, [480, 520, 530]).find((c) => c.id === "cli-help-ms")!.holds)
    assert.isUndefined(Report.checks([], []).find((c) => c.id === "cli-help-ms"))
  })
})

describe("Profile", () => {
  it("sums self time per function inside the window, idle apart", () => {
    const profile = {
      startTime: 1000,
      endTime: 2000,
      nodes: [
        { id: 1, callFrame: { functionName: "(root)", url: "", lineNumber: -1 } },
        { id: 2, callFrame: { functionName: "hot", url: `file://${repoRoot}/apps/server/src/X.ts`, lineNumber: 9 } },
        { id: 3, callFrame: { functionName: "(idle)", url: "", lineNumber: -1 } }
      ],
      samples: [2, 2, 3, 2],
      timeDeltas: [100, 100, 100, 700]
    }
    const all = Profile.analyse(profile, repoRoot)
    assert.strictEqual(all.busyMs, 0.9)
    assert.strictEqual(all.functions[0]!.name, "hot")
    assert.strictEqual(all.functions[0]!.location, "apps/server/src/X.ts:10")
    const early = Profile.analyse(profile, repoRoot, { window: { fromUs: 1000, toUs: 1350 } })
    assert.strictEqual(early.busyMs, 0.2)
  })
})

describe("fake upstream and floor", () => {
  it("answers the precomputed vectors, as floats and as base64, through the pass-through", async () => {
    const upstream = await FastUpstream.start({ apiKey: "k", width: 1536, delays: {}, maxInputs: 64 })
    const floor = await PassThrough.start({ upstreamPort: upstream.port })
    try {
      const endpoints = { upstreamPort: upstream.port, ports: { floor: floor.port }, apiKeys: {}, upstreamApiKey: "k" }
      // The cells these targets run in (the bulk cell is Switchyard's alone).
      for (const cell of cells.filter((c) => !c.delayed && c.targets.includes("direct"))) {
        assert.isUndefined(await validate(cell, requestFor(cell, "direct", endpoints)), cell.id)
        assert.isUndefined(await validate(cell, requestFor(cell, "floor", endpoints)), cell.id)
      }
      const text = await (await fetch(`http://127.0.0.1:${upstream.port}/v1/embeddings`, {
        method: "POST",
        headers: { authorization: "Bearer k" },
        body: JSON.stringify({ model: "m", input: "a b c" })
      })).text()
      assert.match(text, /"embedding":\[-?0\.\d{6,}/)
      assert.include(text, `"usage":{"prompt_tokens":3,"total_tokens":3}`)
      const refused = await fetch(`http://127.0.0.1:${upstream.port}/v1/embeddings`, { method: "POST", body: "{}" })
      assert.strictEqual(refused.status, 401)
    } finally {
      await floor.close()
      await upstream.close()
    }
  })
})

describe("the answer's check", () => {
  // Serves `vectors` as an embeddings answer, each at its index.
  const serveAnswer = (vectors: ReadonlyArray<Array<number>>) =>
    new Promise<{ readonly url: string; readonly close: () => void }>((resolve) => {
      const server = Http.createServer((request, response) => {
        request.resume()
        request.on("end", () => {
          response.writeHead(200, { "content-type": "application/json" })
          response.end(JSON.stringify({ object: "list", data: vectors.map((embedding, index) => ({ object: "embedding", index, embedding })) }))
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as { port: number }
        resolve({ url: `http://127.0.0.1:${port}/`, close: () => server.close() })
      })
    })
  // The fake upstream's vectors for `inputs` items sent in pieces of `piece`, each split into calls of at most `call`.
  const layout = (inputs: number, piece: number, call: number) =>
    Array.from({ length: inputs }, (_, i) => FastUpstream.vectorFor((i % piece) % call, 1536))

  it("takes an answer made of pieces split again into calls, and catches a vector out of its place", async () => {
    const cell = cells.find((c) => c.id === "bulk2000-c4")!
    // Pieces of 123 inputs, each sent in calls of at most 64: calls start at 0, 64, 123, 187, 246...
    const good = await serveAnswer(layout(cell.inputs, 123, 64))
    const wrong = layout(cell.inputs, 123, 64)
    wrong[130] = FastUpstream.vectorFor(3, 1536)
    const bad = await serveAnswer(wrong)
    const tooLong = await serveAnswer(layout(cell.inputs, 123, 123))
    try {
      const request = (url: string) => ({ url, headers: {}, body: "{}" })
      assert.isUndefined(await validate(cell, request(good.url), undefined, 64))
      assert.strictEqual(await validate(cell, request(bad.url), undefined, 64), "vector 130 differs from the upstream's")
      // A call of more items than the endpoint takes is not the upstream's answer.
      assert.strictEqual(await validate(cell, request(tooLong.url), undefined, 64), "vector 64 differs from the upstream's")
    } finally {
      good.close()
      bad.close()
      tooLong.close()
    }
  })
})

describe("the minimal Effect gateway", () => {
  it("checks the key, forwards under the upstream's model name and prices the usage in nano-dollars", async () => {
    const upstream = await FastUpstream.start({ apiKey: "k", width: 1536, delays: {}, maxInputs: 64 })
    const floor = await EffectFloor.start({
      upstreamPort: upstream.port,
      upstreamApiKey: "k",
      apiKey: effectFloorApiKey,
      models: { [benchModels.priced]: upstreamModels.fast },
      promptPrice: "0.02"
    })
    try {
      const endpoints = { upstreamPort: upstream.port, ports: { "effect-floor": floor.port }, apiKeys: {}, upstreamApiKey: "k" }
      for (const cell of cells.filter((c) => !c.delayed && c.targets.includes("effect-floor"))) {
        assert.isUndefined(await validate(cell, requestFor(cell, "effect-floor", endpoints)), cell.id)
      }
      const post = (headers: Record<string, string>, body: unknown) =>
        fetch(`http://127.0.0.1:${floor.port}/api/v1/embeddings`, { method: "POST", headers, body: JSON.stringify(body) })
      const auth = { authorization: `Bearer ${effectFloorApiKey}` }
      const answer = await (await post(auth, { model: benchModels.priced, input: "a b c" })).json() as {
        model: string
        usage: { prompt_tokens: number; cost: number }
      }
      assert.strictEqual(answer.model, benchModels.priced)
      // 3 tokens at $0.02 per million: 60 nano-dollars.
      assert.strictEqual(answer.usage.cost, 6e-8)
      assert.strictEqual((await post({}, { model: benchModels.priced, input: "a" })).status, 401)
      assert.strictEqual((await post(auth, { model: "nope", input: "a" })).status, 404)
      assert.strictEqual((await post(auth, { input: "a" })).status, 400)
    } finally {
      await floor.close()
      await upstream.close()
    }
  })
})

describe("pnpm bench", () => {
  it("runs every target end to end in its smallest form and writes Markdown and JSON", async () => {
    const out = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-bench-test-"))
    try {
      const args = [
        "src/main.ts", "--quick", "--seconds", "0.5", "--runs", "1", "--warmup", "0.2",
        "--cells", "small-c1,base64-c16", "--targets", "switchyard", "--out", out, "--summary", "none", "--no-pg"
      ]
      const child = spawn(process.execPath, args, { cwd: NodePath.join(repoRoot, "bench"), stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      child.stdout.on("data", (chunk) => (output += chunk))
      child.stderr.on("data", (chunk) => (output += chunk))
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
      assert.strictEqual(code, 0, output)
      const report = JSON.parse(Fs.readFileSync(NodePath.join(out, "latest.json"), "utf8")) as Report.Report
      assert.deepStrictEqual(report.cells.map((c) => c.cell), ["small-c1", "base64-c16"])
      for (const cell of report.cells) {
        assert.deepStrictEqual(cell.skipped, [], cell.cell)
        // The peer gateway is installed from the registry on demand by `pnpm bench`, not by the tests.
        assert.deepStrictEqual(cell.targets.map((t) => t.target).sort(), ["direct", "floor", "switchyard"])
        for (const target of cell.targets) assert.strictEqual(target.runs, 1)
        for (const target of cell.targets.filter((t) => t.target === "direct" || t.target === "floor")) {
          assert.isAbove(target.rps.median, 0, `${cell.cell} ${target.target}`)
        }
        assert.isAbove(cell.targets.find((t) => t.target === "switchyard")!.peakRssMb!, 0)
      }
      const runs = report.samples.filter((s) => s.target === "switchyard")
      assert.strictEqual(runs.length, 2)
      assert.isAbove(runs.reduce((n, s) => n + s.okTotal, 0), 0)
      assert.includeMembers(report.checks.map((c) => c.id), ["small-c1-added-p50-switchyard", "rss-growth-switchyard", "idle-rss-switchyard"])
      const markdown = Fs.readFileSync(NodePath.join(out, "latest.md"), "utf8")
      assert.include(markdown, "| target | req/s (min–max) |")
      assert.include(output, "## Targets")
    } finally {
      Fs.rmSync(out, { recursive: true, force: true })
    }
  })
})

describe("pnpm bench --rounds", () => {
  it("seeds a ledger into a store the gateway made, restarts it on the same keys and measures each round", async () => {
    const out = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-bench-test-"))
    try {
      // Rounds long enough, after a warm-up, to complete requests on a loaded machine (CI runs the packages side by side).
      const args = ["src/main.ts", "--rounds", "--runs", "2", "--seconds", "2", "--warmup", "1", "--rows", "500", "--out", out, "--no-pg"]
      const child = spawn(process.execPath, args, { cwd: NodePath.join(repoRoot, "bench"), stdio: ["ignore", "pipe", "pipe"] })
      let output = ""
      child.stdout.on("data", (chunk) => (output += chunk))
      child.stderr.on("data", (chunk) => (output += chunk))
      const code = await new Promise<number | null>((resolve) => child.once("exit", resolve))
      assert.strictEqual(code, 0, output)
      const file = Fs.readdirSync(out).find((f) => f.startsWith("rounds-") && f.endsWith(".json"))!
      const { series } = JSON.parse(Fs.readFileSync(NodePath.join(out, file), "utf8")) as { series: ReadonlyArray<SoakReport.Series> }
      assert.strictEqual(series.length, 1)
      const [sqlite] = series
      assert.strictEqual(sqlite!.store, "sqlite")
      assert.strictEqual(sqlite!.seededRows, 500)
      assert.isAbove(sqlite!.seedMs!, 0)
      assert.deepStrictEqual(sqlite!.periods.map((p) => p.index), [1, 2])
      for (const period of sqlite!.periods) {
        assert.isAbove(period.requests, 0)
        assert.strictEqual(period.failures, 0)
        assert.isAbove(period.gatewayCpuMs, 0)
        assert.isAbove(period.dataBytes, 0)
      }
      assert.match(output, /SQLite round 2: \d+ req\/s, gateway [\d.]+ ms\/req/u)
      assert.include(output, "| last round's req/s ÷ the first's |")
    } finally {
      Fs.rmSync(out, { recursive: true, force: true })
    }
  })
})

describe("Report checks", () => {
  const check = (value: number, limit: number, direction: "max" | "min") => ({
    id: "x",
    text: "x",
    value,
    limit,
    direction,
    holds: direction === "max" ? value <= limit : value >= limit
  })

  it("prints a check with as many decimals as it takes to agree with its verdict", () => {
    assert.strictEqual(Report.checkValue(check(0.7997, 0.8, "min")), "0.7997")
    assert.strictEqual(Report.checkValue(check(0.81, 0.8, "min")), "0.81")
    assert.strictEqual(Report.checkValue(check(2.004, 2, "max")), "2.004")
    assert.strictEqual(Report.checkValue(check(11.77, 2, "max")), "11.77")
  })
})
