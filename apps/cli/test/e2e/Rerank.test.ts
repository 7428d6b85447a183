import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { type RunningServer, startServer } from "../../../server/test/support/TestServer.ts"
import { runCli, tempDir } from "../support/Cli.ts"

const model = "switchyard/local-rerank"
const query = "how do plants make sugar from sunlight"
const documents = ["The train leaves at nine.", "Plants use sunlight to make sugar through photosynthesis.", "Flour, butter, eggs."]

describe("switchyard rerank (the binary against a fresh gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let env: Record<string, string>
  beforeAll(async () => {
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.apiKey }
  })
  afterAll(() => server?.close())

  it("prints one JSON line per document, best first, when piped", async () => {
    const ran = await runCli(["rerank", "-m", model, "--query", query, ...documents], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const lines = ran.stdout.trim().split("\n").map((l) => JSON.parse(l) as { index: number; relevance_score: number })
    assert.strictEqual(lines.length, 3)
    assert.strictEqual(lines[0]!.index, 1)
    assert.isAtLeast(lines[0]!.relevance_score, lines[1]!.relevance_score)
  })

  it("reads JSONL documents with --file and keeps --top-n of them; --json prints the response", async () => {
    const file = NodePath.join(tempDir("rerank"), "hits.jsonl")
    Fs.writeFileSync(file, `${JSON.stringify({ text: documents[0] })}\n${JSON.stringify(documents[1])}\n${JSON.stringify({ text: documents[2] })}\n`)
    const ran = await runCli(["rerank", "-m", model, "--query", query, "--file", file, "--top-n", "1", "--json"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const response = JSON.parse(ran.stdout)
    assert.strictEqual(response.model, model)
    assert.deepStrictEqual(response.results.map((r: { index: number }) => r.index), [1])
    assert.strictEqual(response.usage.cost, 0)
  })

  it("models list --task rerank lists the rerank models", async () => {
    const ran = await runCli(["models", "list", "--task", "rerank", "--json"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.deepStrictEqual(JSON.parse(ran.stdout).data.map((m: { id: string }) => m.id), [model])
  })

  it("exits non-zero with a usage error when there is nothing to rerank, and names the other task's model", async () => {
    const empty = await runCli(["rerank", "-m", model, "--query", query], { env })
    assert.notStrictEqual(empty.code, 0)
    assert.include(empty.stderr, "Nothing to rerank")
    const wrong = await runCli(["rerank", "-m", "switchyard/local-embed", "--query", query, "a"], { env })
    assert.notStrictEqual(wrong.code, 0)
    assert.include(wrong.stderr, "embeddings model")
  })
})

describe("switchyard route explain for a rerank model (the binary against a configured gateway)", () => {
  let server: RunningServer
  let env: Record<string, string>
  const rerankModel = "acme/rerank"
  beforeAll(async () => {
    // The plan calls no provider, so the base URLs are never reached.
    const config = NodePath.join(tempDir("route"), "switchyard.json")
    const endpoint = { model: rerankModel, upstream_model: "r", task: "rerank" }
    Fs.writeFileSync(config, JSON.stringify({
      providers: [
        {
          slug: "searchy", name: "Searchy", adapter: "cohere", base_url: "http://127.0.0.1:9/v2", api_key_env: "SEARCHY_API_KEY",
          data_collection: "deny", zdr: true, endpoints: [{ ...endpoint, pricing: { search: "2" }, max_documents: 100 }]
        },
        {
          slug: "tokeny", name: "Tokeny", adapter: "jina", base_url: "http://127.0.0.1:9/v1", api_key_env: "TOKENY_API_KEY",
          data_collection: "allow", endpoints: [{ ...endpoint, pricing: { prompt: "0.05" } }]
        }
      ]
    }))
    server = await startServer({ env: { SWITCHYARD_CONFIG: config, SEARCHY_API_KEY: "sk-fake", TOKENY_API_KEY: "sk-fake" } })
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.apiKey }
  })
  afterAll(() => server?.close())

  it("finds the model's task, prices each endpoint by what it charges, says who is out and why, and estimates a search", async () => {
    const ran = await runCli(["route", "explain", "-m", rerankModel, "--zdr", "--query", "refund policy", "doc one", "doc two"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    assert.match(ran.stdout, new RegExp(`^Route for ${rerankModel} \\(rerank\\): `, "u"))
    assert.match(ran.stdout, /#\s+PROVIDER\s+VARIANT\s+PRICE\s+STATUS\s+WHY/u)
    assert.match(ran.stdout, /1\s+searchy\s+\S+\s+\$2\/1k searches\s+in\s+/u)
    assert.match(ran.stdout, /-\s+tokeny\s+\S+\s+\$0\.05\/M tokens\s+out\s+out: zdr/u)
    assert.match(ran.stdout, /Estimate: at most \d+ tokens, at most \$0\.002 on the first choice\./u)

    // No texts and no query: the route alone, the task found from the model.
    const bare = await runCli(["route", "explain", "-m", rerankModel, "--sort", "price", "--json"], { env })
    assert.strictEqual(bare.code, 0, bare.stderr)
    const report = JSON.parse(bare.stdout) as { object: string; attempts: Array<string> }
    assert.strictEqual(report.object, "rerank.plan")
    assert.strictEqual(report.attempts.length, 2)
    const explicit = await runCli(["route", "explain", "--task", "rerank", "-m", "switchyard/local-rerank", "--json"], { env })
    assert.strictEqual(JSON.parse(explicit.stdout).object, "rerank.plan")
  })

  it("with every rerank endpoint out, prints the table and exits 4; embeddings flags and the wrong task are refused", async () => {
    const none = await runCli(["route", "explain", "-m", rerankModel, "--zdr", "--ignore", "searchy"], { env })
    assert.strictEqual(none.code, 4, none.stderr)
    assert.match(none.stdout, new RegExp(`^No route for ${rerankModel} \\(rerank\\): every endpoint serving the model was excluded`, "u"))
    assert.match(none.stdout, /-\s+searchy\s+\S+\s+\$2\/1k searches\s+out\s+out: ignore/u)
    const flags = await runCli(["route", "explain", "-m", rerankModel, "--dimensions", "8"], { env })
    assert.strictEqual(flags.code, 2, flags.stderr)
    assert.include(flags.stderr, "--dimensions apply to embeddings")
    const asEmbeddings = await runCli(["route", "explain", "--task", "embeddings", "-m", rerankModel], { env })
    assert.strictEqual(asEmbeddings.code, 1, asEmbeddings.stderr)
    assert.include(asEmbeddings.stderr, "is a rerank model")
  })
})
