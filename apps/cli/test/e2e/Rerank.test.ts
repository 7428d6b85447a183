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
