import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as FakeOpenAiBatch from "../../../server/test/fakes/FakeOpenAiBatch.ts"
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
    // What its served lines cost so far, as the batch object says it (the local model is free).
    assert.strictEqual(batch.cost, 0)
    assert.match(got.stdout, /^cost\s+\$0\.00$/mu)

    const listed = await runCli(["batch", "list", "--json"], { env })
    assert.include(JSON.parse(listed.stdout).data.map((b: { id: string }) => b.id), batch.id)
    // The instance administrator's management key oversees every workspace's batches.
    const admin = { ...env, SWITCHYARD_API_KEY: server.managementKey }
    const everywhere = await runCli(["batch", "list", "--all-workspaces"], { env: admin })
    assert.strictEqual(everywhere.code, 0, everywhere.stderr)
    assert.match(everywhere.stdout, new RegExp(`^${batch.id}\\s.*\\s${batch.workspace_id}$`, "mu"))
    assert.strictEqual((await runCli(["batch", "get", batch.id], { env: admin })).code, 0)

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

  it("create --live keeps every line on live calls; without it a provider with a batch API gets a provider batch", async () => {
    const upstream = await FakeOpenAiBatch.start()
    const dir = tempDir("batch-live")
    const config = NodePath.join(dir, "switchyard.json")
    Fs.writeFileSync(config, JSON.stringify({
      providers: [{
        slug: "alpha",
        name: "Alpha",
        adapter: "openai",
        dialect: "openai",
        base_url: upstream.url,
        api_key_env: "ALPHA_API_KEY",
        data_collection: "deny",
        endpoints: [{
          model: "acme/embed",
          upstream_model: "embed",
          pricing: { prompt: "0.1", batch: { prompt: "0.05" } },
          dimensions: 16,
          max_batch_items: 64
        }]
      }]
    }))
    const gateway = await startServer({
      env: { SWITCHYARD_CONFIG: config, ALPHA_API_KEY: "sk-fake", SWITCHYARD_BATCH_POLL_MS: "100", SWITCHYARD_PROVIDER_BATCH_POLL_MS: "100" }
    })
    try {
      const cli = { SWITCHYARD_BASE_URL: gateway.baseUrl, SWITCHYARD_API_KEY: gateway.apiKey }
      const file = NodePath.join(dir, "corpus.jsonl")
      Fs.writeFileSync(file, ["one", "two"].map((t) => JSON.stringify({ custom_id: t, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: t } })).join("\n"))
      const live = await runCli(["batch", "create", file, "--live", "--wait", "--json"], { env: cli })
      assert.strictEqual(live.code, 0, live.stderr)
      assert.strictEqual(JSON.parse(live.stdout).request_counts.completed, 2)
      assert.strictEqual(upstream.batches.size, 0)
      const auto = await runCli(["batch", "create", file, "--wait", "--json"], { env: cli })
      assert.strictEqual(auto.code, 0, auto.stderr)
      assert.strictEqual(JSON.parse(auto.stdout).request_counts.completed, 2)
      assert.strictEqual(upstream.batches.size, 1)
    } finally {
      await gateway.close()
      await upstream.close()
    }
  })
})
