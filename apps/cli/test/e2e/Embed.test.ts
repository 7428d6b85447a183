import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as FakeOpenAi from "../../../server/test/fakes/FakeOpenAi.ts"
import type { FakeServer } from "../../../server/test/fakes/FakeUpstream.ts"
import { type RunningServer, startServer } from "../../../server/test/support/TestServer.ts"
import { Switchyard } from "@switchyard/client/Switchyard"
import { runCli, runInTerminal, stripAnsi, tempDir } from "../support/Cli.ts"

const model = "openai/text-embedding-3-small"

const outLines = (path: string) =>
  Fs.readFileSync(path, "utf8").split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as { id: string | number; embedding: Array<number> })

describe("switchyard embed, route explain and models list (the binary against the gateway on 127.0.0.1)", () => {
  let fake: FakeServer
  let server: RunningServer
  let env: Record<string, string>
  let dir: string

  beforeAll(async () => {
    fake = await FakeOpenAi.start()
    dir = tempDir("embed")
    const config = NodePath.join(dir, "switchyard.json")
    Fs.writeFileSync(config, JSON.stringify({
      providers: [{
        slug: "alpha",
        name: "Alpha Cloud",
        adapter: "openai",
        base_url: fake.url,
        api_key_env: "ALPHA_API_KEY",
        data_collection: "deny",
        zdr: true,
        endpoints: [{
          model,
          upstream_model: "text-embedding-3-small",
          pricing: { prompt: "0.02", request: "0", image: "0", audio: "0" },
          quantization: "fp16",
          dimensions: 1536,
          supported_parameters: ["dimensions", "encoding_format", "input_type", "user"],
          max_batch_items: 2048,
          distillable: true
        }]
      }, {
        slug: "beta",
        name: "Beta AI",
        adapter: "openai",
        base_url: fake.url,
        api_key_env: "ALPHA_API_KEY",
        data_collection: "allow",
        zdr: false,
        endpoints: [{
          model,
          upstream_model: "text-embedding-3-small",
          pricing: { prompt: "0.01", request: "0", image: "0", audio: "0" },
          quantization: "fp8",
          dimensions: 1536,
          supported_parameters: ["dimensions", "encoding_format"],
          max_batch_items: 2048,
          distillable: true
        }]
      }]
    }))
    server = await startServer({ env: { SWITCHYARD_CONFIG: config, ALPHA_API_KEY: "sk-fake", SWITCHYARD_RATE_LIMIT: "off" } })
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.apiKey }
    await using operator = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
    await operator.credits.add({ payload: { amount: "10" } })
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  it("prints a summary of the vectors on a terminal", async () => {
    const ran = await runInTerminal(["embed", "-m", model, "--dimensions", "8", "first text", "second text"], { env })
    assert.strictEqual(ran.code, 0, ran.output)
    const text = stripAnsi(ran.output)
    assert.match(text, /#\s+INPUT\s+DIMS\s+NORM\s+VECTOR/u)
    assert.match(text, /0\s+"first text"\s+8\s+\d\.\d{4}\s+\[-?[\d.e-]+, -?[\d.e-]+, -?[\d.e-]+, -?[\d.e-]+, …\]/u)
    assert.match(text, /1\s+"second text"\s+8\s/u)
    assert.include(text, `model ${model} · 4 tokens · $`)
  })

  it("prints one JSON vector per line when piped, and the whole response with --json", async () => {
    const piped = await runCli(["embed", "-m", model, "--dimensions", "8", "first text", "second text"], { env })
    assert.strictEqual(piped.code, 0, piped.stderr)
    const vectors = piped.stdout.trim().split("\n").map((l) => JSON.parse(l) as Array<number>)
    assert.deepStrictEqual(vectors.map((v) => v.length), [8, 8])
    const json = await runCli(["embed", "-m", model, "--dimensions", "8", "--json", "first text"], { env })
    const response = JSON.parse(json.stdout) as { object: string; data: Array<{ embedding: Array<number> }>; usage: { prompt_tokens: number } }
    assert.strictEqual(response.object, "list")
    assert.deepStrictEqual(response.data[0]!.embedding, vectors[0])
    assert.strictEqual(response.usage.prompt_tokens, 2)
  })

  it("--dtype and --truncate reach the gateway: binary vectors of dimensions / 8 numbers", async () => {
    const piped = await runCli(["embed", "-m", model, "--dimensions", "16", "--dtype", "binary", "--truncate", "chunk", "first text"], { env })
    assert.strictEqual(piped.code, 0, piped.stderr)
    const vector = JSON.parse(piped.stdout.trim()) as Array<number>
    assert.strictEqual(vector.length, 2)
    assert.isTrue(vector.every((b) => Number.isInteger(b) && b >= -128 && b <= 127))
    const refused = await runCli(["embed", "-m", model, "--dtype", "int4", "x"], { env })
    assert.notStrictEqual(refused.code, 0)
  })

  it("embeds standard input as one text", async () => {
    const ran = await runCli(["embed", "-m", model, "--dimensions", "4", "--json"], { env, input: "a text\nacross two lines\n" })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const response = JSON.parse(ran.stdout) as { data: Array<unknown>; usage: { prompt_tokens: number } }
    assert.strictEqual(response.data.length, 1)
    assert.strictEqual(response.usage.prompt_tokens, 5)
  })

  it("sends the provider preference flags as the provider object", async () => {
    const before = fake.requests.length
    const ran = await runCli(["embed", "-m", model, "--dimensions", "4", "--zdr", "--deny-data-collection", "--only", "alpha,beta", "--sort", "price", "--max-price", "0.05", "--no-fallbacks", "x"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.strictEqual(fake.requests.length, before + 1)
    const wrong = await runCli(["embed", "-m", model, "--only", "beta", "--zdr", "x"], { env })
    assert.strictEqual(wrong.code, 4, wrong.stderr)
    assert.match(wrong.stderr, /^error: .+\(HTTP 404 NotFound\)/u)
  })

  it("refuses bad input before sending anything", async () => {
    const before = fake.requests.length
    for (const args of [["--file", "x.txt"], ["--out", "v.jsonl", "x"], ["--max-price", "prompt=1,speed=2", "x"], ["--quantizations", "fp7", "x"], ["--dimensions", "0", "x"]]) {
      const ran = await runCli(["embed", "-m", model, ...args], { env })
      assert.strictEqual(ran.code, 2, `${args.join(" ")}: ${ran.stderr}`)
      assert.match(ran.stderr, /^error: /u)
    }
    const missing = await runCli(["embed", "-m", model, "--file", NodePath.join(dir, "nope.txt"), "--out", NodePath.join(dir, "nope.jsonl")], { env })
    assert.strictEqual(missing.code, 2)
    assert.include(missing.stderr, "no such file")
    assert.strictEqual(fake.requests.length, before)
  })

  it("embeds a 1,000-line file with a progress bar in a terminal, stops on Ctrl-C and resumes without duplicates", async () => {
    const input = NodePath.join(dir, "corpus.txt")
    const out = NodePath.join(dir, "corpus.jsonl")
    Fs.writeFileSync(input, Array.from({ length: 1000 }, (_, i) => `document number ${i + 1} about topic ${i % 17}`).join("\n"))
    fake.setBehaviour({ _tag: "Delay", ms: 60 })
    const args = ["embed", "-m", model, "--dimensions", "4", "--file", input, "--out", out, "--batch-size", "10", "--concurrency", "2"]
    let interrupted = false
    const first = await runInTerminal(args, {
      env,
      onOutput: () => {
        if (interrupted || !Fs.existsSync(out) || outLines(out).length < 200) return undefined
        interrupted = true
        return "\x03"
      }
    })
    fake.setBehaviour({ _tag: "Normal" })
    assert.strictEqual(first.code, 130, first.output)
    const screen = stripAnsi(first.output)
    assert.match(screen, /embedding [█░]+ \d+% \| \d+\/1000 \| [\d.]+\/s \| ETA \S+ \| [\d,]+ tokens \| \$/u)
    assert.match(screen, /Interrupted: \d+ of 1000 inputs are saved in .*corpus\.jsonl\. Run the same command again to continue\./u)
    const partial = outLines(out)
    assert.isAtLeast(partial.length, 200)
    assert.isBelow(partial.length, 1000)

    const second = await runInTerminal(args, { env })
    assert.strictEqual(second.code, 0, second.output)
    assert.include(stripAnsi(second.output), `${partial.length} of 1000 inputs are already in ${out}`)
    const all = outLines(out)
    assert.strictEqual(all.length, 1000)
    assert.deepStrictEqual([...new Set(all.map((l) => l.id))].sort((a, b) => Number(a) - Number(b)), Array.from({ length: 1000 }, (_, i) => i + 1))
    assert.isTrue(all.every((l) => l.embedding.length === 4))
    assert.match(stripAnsi(second.output), /inputs\s+1000 \(\d+ embedded now, \d+ already in /u)
  })

  it("prints plain progress lines and a JSON summary when not on a terminal", async () => {
    const input = NodePath.join(dir, "docs.jsonl")
    const out = NodePath.join(dir, "docs-vectors.jsonl")
    Fs.writeFileSync(input, Array.from({ length: 30 }, (_, i) => JSON.stringify({ id: `doc-${i}`, text: `text ${i}` })).join("\n"))
    const ran = await runCli(["embed", "-m", model, "--dimensions", "4", "--file", input, "--out", out, "--batch-size", "7", "--json"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.match(ran.stderr, /^embedded 30\/30 \(100%\), [\d.]+\/s, ETA \S+$/mu)
    assert.notInclude(ran.stderr, "\u001b[")
    const summary = JSON.parse(ran.stdout) as { total: number; embedded: number; skipped: number; tokens: number; cost: number }
    assert.deepStrictEqual({ total: summary.total, embedded: summary.embedded, skipped: summary.skipped, tokens: summary.tokens }, { total: 30, embedded: 30, skipped: 0, tokens: 60 })
    assert.isAbove(summary.cost, 0)
    // Batches are appended as they are answered (four in flight): every id once, each batch in order.
    const ids = outLines(out).map((l) => String(l.id))
    assert.deepStrictEqual([...ids].sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))), Array.from({ length: 30 }, (_, i) => `doc-${i}`))
    for (let first = 0; first < 30; first += 7) {
      const at = ids.indexOf(`doc-${first}`)
      const batch = Array.from({ length: Math.min(7, 30 - first) }, (_, i) => `doc-${first + i}`)
      assert.deepStrictEqual(ids.slice(at, at + batch.length), batch, `the batch from doc-${first} is written whole, in input order`)
    }
  })

  it("exits non-zero with the gateway's message when a batch fails, keeping what was written", async () => {
    const input = NodePath.join(dir, "fails.txt")
    const out = NodePath.join(dir, "fails.jsonl")
    Fs.writeFileSync(input, Array.from({ length: 50 }, (_, i) => `line ${i}`).join("\n"))
    fake.setBehaviour([{ _tag: "Normal" }, { _tag: "Normal" }, { _tag: "Status", status: 400 }])
    const failed = await runCli(["embed", "-m", model, "--dimensions", "4", "--file", input, "--out", out, "--batch-size", "10", "--concurrency", "1"], { env })
    assert.strictEqual(failed.code, 1, failed.stderr)
    assert.match(failed.stderr, /^error: .+\(HTTP 400 BadRequest\)$/mu)
    assert.include(failed.stderr, `20 of 50 inputs are saved in ${out}; run the same command again to continue.`)
    assert.strictEqual(outLines(out).length, 20)
    const again = await runCli(["embed", "-m", model, "--dimensions", "4", "--file", input, "--out", out, "--batch-size", "10"], { env })
    assert.strictEqual(again.code, 0, again.stderr)
    assert.strictEqual(new Set(outLines(out).map((l) => l.id)).size, 50)
  })

  it("explains the route as a table: who is in, who is out and why", async () => {
    const ran = await runCli(["route", "explain", "-m", model, "--zdr", "a text of six words here"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const lines = ran.stdout.split("\n")
    assert.match(lines[0]!, new RegExp(`^Route for ${model}: `, "u"))
    assert.match(ran.stdout, /#\s+PROVIDER\s+VARIANT\s+\$\/M TOKENS\s+STATUS\s+WHY/u)
    assert.match(ran.stdout, /1\s+alpha\s+\S+\s+\$0\.02\s+in\s+/u)
    assert.match(ran.stdout, /-\s+beta\s+\S+\s+\$0\.01\s+out\s+out: zdr/u)
    assert.match(ran.stdout, /Estimate: at most \d+ prompt tokens, at most \$[\d.]+ on the first choice\./u)
    const json = await runCli(["route", "explain", "-m", model, "--json"], { env })
    const report = JSON.parse(json.stdout) as { object: string; attempts: Array<string> }
    assert.strictEqual(report.object, "embeddings.plan")
    assert.strictEqual(report.attempts.length, 2)
  })

  it("with every provider out, explains the route as the table of who is out and why, and exits 4", async () => {
    const ran = await runCli(["route", "explain", "-m", model, "--zdr", "--quantizations", "fp8"], { env })
    assert.strictEqual(ran.code, 4, ran.stderr)
    assert.match(ran.stdout, new RegExp(`^No route for ${model}: every endpoint serving the model was excluded\n`, "u"))
    assert.match(ran.stdout, /#\s+PROVIDER\s+VARIANT\s+\$\/M TOKENS\s+STATUS\s+WHY/u)
    assert.match(ran.stdout, /-\s+alpha\s+\S+\s+\$0\.02\s+out\s+out: quantizations/u)
    assert.match(ran.stdout, /-\s+beta\s+\S+\s+\$0\.01\s+out\s+out: zdr/u)
    assert.include(ran.stderr, `error: No provider can serve ${model} with these preferences (HTTP 404 NotFound)`)
    assert.include(ran.stderr, "WHY column")
    assert.notInclude(ran.stderr, "keys list")
    const json = await runCli(["route", "explain", "-m", model, "--zdr", "--quantizations", "fp8", "--json"], { env })
    assert.strictEqual(json.code, 4)
    assert.strictEqual(json.stdout, "")
    assert.include(json.stderr, "No allowed provider")
    const unknown = await runCli(["route", "explain", "-m", "acme/nothing"], { env })
    assert.strictEqual(unknown.code, 4)
    assert.include(unknown.stderr, "switchyard models list")
  })

  it("lists the models as a table and as JSON", async () => {
    const ran = await runCli(["models", "list"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.match(ran.stdout, /^MODEL\s+NAME\s+CONTEXT\s+\$\/M TOKENS\s+INPUT\s+PARAMETERS/u)
    assert.include(ran.stdout, model)
    const json = JSON.parse((await runCli(["models", "list", "--json"], { env })).stdout) as { data: Array<{ id: string }> }
    assert.isTrue(json.data.some((m) => m.id === model))
  })
})

describe("switchyard embed --file with the gateway's cache on", () => {
  it("reports how many inputs the cache served", async () => {
    const fake = await FakeOpenAi.start()
    const dir = tempDir("cached")
    const config = NodePath.join(dir, "switchyard.json")
    Fs.writeFileSync(config, JSON.stringify({
      providers: [{
        slug: "alpha",
        name: "Alpha Cloud",
        adapter: "openai",
        base_url: fake.url,
        api_key_env: "ALPHA_API_KEY",
        data_collection: "deny",
        endpoints: [{
          model,
          upstream_model: "text-embedding-3-small",
          pricing: { prompt: "0.02" },
          dimensions: 1536,
          supported_parameters: ["dimensions", "encoding_format"],
          max_batch_items: 64,
          distillable: true
        }]
      }],
      workspaces: { default: { cache: true } }
    }))
    const server = await startServer({ env: { SWITCHYARD_CONFIG: config, ALPHA_API_KEY: "sk-fake", SWITCHYARD_RATE_LIMIT: "off" } })
    try {
      await using operator = new Switchyard({ baseUrl: server.baseUrl, apiKey: server.managementKey })
      await operator.credits.add({ payload: { amount: "10" } })
      const env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.apiKey }
      const input = NodePath.join(dir, "docs.txt")
      Fs.writeFileSync(input, Array.from({ length: 5 }, (_, i) => `document ${i}`).join("\n"))
      const run = (out: string) => runCli(["embed", "-m", model, "--dimensions", "4", "--file", input, "--out", NodePath.join(dir, out)], { env })
      const first = await run("first.jsonl")
      assert.strictEqual(first.code, 0, first.stderr)
      assert.match(first.stdout, /cache\s+0 of 5 from the gateway's cache/u)
      const second = await run("second.jsonl")
      assert.strictEqual(second.code, 0, second.stderr)
      assert.match(second.stdout, /cache\s+5 of 5 from the gateway's cache/u)
      assert.deepStrictEqual(outLines(NodePath.join(dir, "second.jsonl")), outLines(NodePath.join(dir, "first.jsonl")))
      assert.strictEqual(fake.requests.length, 1)
    } finally {
      await server.close()
      await fake.close()
    }
  }, 120_000)
})
