import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as FakeTei from "../../../server/test/fakes/FakeTei.ts"
import type * as FakeUpstream from "../../../server/test/fakes/FakeUpstream.ts"
import { type RunningServer, startServer, tempDir } from "../../../server/test/support/TestServer.ts"
import { runCli } from "../support/Cli.ts"

describe("switchyard providers add --adapter tei with replicas (the binary against the gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let replicas: Array<FakeUpstream.FakeServer>
  let env: Record<string, string>
  let endpoints: string
  beforeAll(async () => {
    replicas = await Promise.all([FakeTei.start(), FakeTei.start()])
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey }
    endpoints = NodePath.join(tempDir("cli-tei"), "endpoints.json")
    Fs.writeFileSync(endpoints, JSON.stringify({
      base_url: "http://replaced.invalid:80",
      endpoints: [{ model: "baai/bge-small", upstream_model: "BAAI/bge-small-en-v1.5", pricing: { prompt: "0" }, dimensions: 384, max_batch_items: 32 }]
    }))
  })
  afterAll(async () => {
    await server?.close()
    await Promise.all((replicas ?? []).map((r) => r.close()))
  })

  it("adds one provider of two TEI replicas from repeated --base-url and tests it; the gateway shows both replicas", async () => {
    const added = await runCli([
      "providers", "add", "--slug", "gpu-tei", "--adapter", "tei", "--base-url", replicas[0]!.url, "--base-url", replicas[1]!.url,
      "--data-collection", "deny", "--file", endpoints
    ], { env })
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /base urls\s+http:\/\/127\.0\.0\.1:\d+, http:\/\/127\.0\.0\.1:\d+/u)
    assert.notInclude(added.stdout, "replaced.invalid")
    const tested = await runCli(["providers", "test", "gpu-tei"], { env })
    assert.strictEqual(tested.code, 0, tested.stderr)
    assert.match(tested.stdout, /baai\/bge-small\s+embeddings\s+ok\s+200/u)
    const shown = await fetch(`${server.baseUrl}/providers/gpu-tei`, { headers: { authorization: `Bearer ${server.managementKey}` } })
    const body = await shown.json() as { data: { replicas: Array<{ base_url: string }> } }
    assert.deepStrictEqual(body.data.replicas.map((r) => r.base_url), replicas.map((r) => r.url))
  })

  it("adds a TEI server with --discover and no endpoints: the model its /info names is served within an interval", async () => {
    const added = await runCli([
      "providers", "add", "--slug", "gpu-tei-found", "--adapter", "tei", "--base-url", replicas[0]!.url,
      "--data-collection", "deny", "--discover", "--discover-interval", "5"
    ], { env })
    assert.strictEqual(added.code, 0, added.stderr)
    const listed = async () => {
      const response = await fetch(`${server.baseUrl}/models`, { headers: { authorization: `Bearer ${server.apiKey}` } })
      return ((await response.json()) as { data: Array<{ id: string }> }).data.map((m) => m.id)
    }
    let ids = await listed()
    for (const deadline = Date.now() + 10_000; !ids.includes("gpu-tei-found/baai/bge-small-en-v1.5") && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 100))
      ids = await listed()
    }
    assert.include(ids, "gpu-tei-found/baai/bge-small-en-v1.5")
    const shown = await fetch(`${server.baseUrl}/providers/gpu-tei-found`, { headers: { authorization: `Bearer ${server.managementKey}` } })
    const body = await shown.json() as { data: { provider: { discover?: boolean; discover_interval_s?: number } } }
    assert.strictEqual(body.data.provider.discover, true)
    assert.strictEqual(body.data.provider.discover_interval_s, 5)
  })
})
