import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { type RunningServer, startServer } from "../../../server/test/support/TestServer.ts"
import { runCli, tempDir } from "../support/Cli.ts"

const model = "switchyard/local-embed"

describe("switchyard batch (the binary against a fresh gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let env: Record<string, string>
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_BATCH_POLL_MS: "100" } })
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.apiKey }
  })
  afterAll(() => server?.close())

  it("create --wait runs a file to completion; get, list and output show it; a finished batch cannot be cancelled", async () => {
    const file = NodePath.join(tempDir("batch"), "corpus.jsonl")
    const texts = ["alpha beta", "gamma", "delta epsilon zeta"]
    Fs.writeFileSync(
      file,
      `${texts.map((t, i) => JSON.stringify({ custom_id: `t${i}`, method: "POST", url: "/v1/embeddings", body: { model, input: t } })).join("\n")}\nnot json\n`
    )
    const created = await runCli(["batch", "create", file, "--wait", "--json"], { env })
    assert.strictEqual(created.code, 0, created.stderr)
    const batch = JSON.parse(created.stdout)
    assert.strictEqual(batch.status, "completed")
    assert.deepStrictEqual(batch.request_counts, { total: 4, completed: 3, failed: 1 })

    const got = await runCli(["batch", "get", batch.id], { env })
    assert.strictEqual(got.code, 0, got.stderr)
    assert.include(got.stdout, "completed")
    assert.include(got.stdout, "3 served, 1 failed")

    const listed = await runCli(["batch", "list", "--json"], { env })
    assert.include(JSON.parse(listed.stdout).data.map((b: { id: string }) => b.id), batch.id)

    const output = await runCli(["batch", "output", batch.id], { env })
    assert.strictEqual(output.code, 0, output.stderr)
    const lines = output.stdout.trim().split("\n").map((l) => JSON.parse(l))
    assert.sameMembers(lines.map((l) => l.custom_id), ["t0", "t1", "t2"])
    for (const l of lines) assert.strictEqual(l.response.body.model, model)

    const out = NodePath.join(tempDir("batch"), "errors.jsonl")
    const errors = await runCli(["batch", "output", batch.id, "--errors", "--out", out], { env })
    assert.strictEqual(errors.code, 0, errors.stderr)
    assert.include(JSON.parse(Fs.readFileSync(out, "utf8").trim()).error.message, "Line 4")

    const cancelled = await runCli(["batch", "cancel", batch.id], { env })
    assert.notStrictEqual(cancelled.code, 0)
    assert.include(cancelled.stderr, "Cannot cancel a batch with status completed")
  })
})
