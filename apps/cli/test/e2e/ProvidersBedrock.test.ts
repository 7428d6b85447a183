import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as FakeBedrock from "../../../server/test/fakes/FakeBedrock.ts"
import { type RunningServer, startServer, tempDir } from "../../../server/test/support/TestServer.ts"
import { runCli } from "../support/Cli.ts"

const bedrockKey = "ABSKZmFrZS1iZWRyb2NrLWtleS0xMjM0"

describe("switchyard providers add --adapter bedrock (the binary against the gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let fake: FakeBedrock.FakeBedrock
  let env: Record<string, string>
  let endpoints: string
  beforeAll(async () => {
    fake = await FakeBedrock.start({ apiKey: bedrockKey, region: "eu-central-1" })
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey, BEDROCK_KEY: bedrockKey }
    endpoints = NodePath.join(tempDir("cli-bedrock"), "endpoints.json")
    Fs.writeFileSync(endpoints, JSON.stringify({
      endpoints: [{
        model: "amazon/titan-embed-text-v2",
        upstream_model: "amazon.titan-embed-text-v2:0",
        pricing: { prompt: "0.02" },
        dimensions: 1024,
        max_batch_items: 128
      }]
    }))
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  it("adds a bedrock provider from flags, shows its region, tests it and keeps the key out of sight", async () => {
    const added = await runCli([
      "providers", "add", "--slug", "bedrock-eu", "--adapter", "bedrock", "--region", "eu-central-1",
      "--base-url", fake.url, "--data-collection", "deny", "--file", endpoints, "--key-from-env", "BEDROCK_KEY"
    ], { env })
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /region\s+eu-central-1/u)
    assert.match(added.stdout, /adapter\s+bedrock/u)
    assert.notInclude(added.stdout, bedrockKey)
    const tested = await runCli(["providers", "test", "bedrock-eu"], { env })
    assert.strictEqual(tested.code, 0, tested.stderr)
    assert.match(tested.stdout, /amazon\/titan-embed-text-v2\s+embeddings\s+ok\s+200/u)
    assert.strictEqual(fake.invocations.at(-1)!.headers.authorization, `Bearer ${bedrockKey}`)
  })

  it("refuses a bedrock provider without a region, and flags without a slug", async () => {
    const noRegion = await runCli(["providers", "add", "--slug", "b2", "--adapter", "bedrock", "--data-collection", "deny"], { env })
    assert.notStrictEqual(noRegion.code, 0)
    assert.include(noRegion.stderr + noRegion.stdout, "needs a region")
    const noSlug = await runCli(["providers", "add", "--adapter", "bedrock", "--region", "us-east-1"], { env })
    assert.strictEqual(noSlug.code, 2, noSlug.stderr)
    assert.include(noSlug.stderr, "--slug, --adapter and --data-collection")
  })
})
