import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as FakeAzureOpenAi from "../../../server/test/fakes/FakeAzureOpenAi.ts"
import { type RunningServer, startServer, tempDir } from "../../../server/test/support/TestServer.ts"
import { runCli } from "../support/Cli.ts"

const azureKey = "azure-cli-key-0123456789abcdef"

describe("switchyard providers add --adapter azure|vertex (the binary against the gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let fake: FakeAzureOpenAi.FakeAzure
  let env: Record<string, string>
  let deployments: string
  let vertexEndpoints: string
  beforeAll(async () => {
    fake = await FakeAzureOpenAi.start({ apiKey: azureKey, defaultWidth: 16 })
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey, AZURE_KEY: azureKey }
    const dir = tempDir("cli-clouds")
    deployments = NodePath.join(dir, "deployments.json")
    Fs.writeFileSync(deployments, JSON.stringify({
      endpoints: [{ model: "openai/text-embedding-3-small", upstream_model: "embed-small", pricing: { prompt: "0.02" }, dimensions: 16, max_batch_items: 2048 }]
    }))
    vertexEndpoints = NodePath.join(dir, "vertex.json")
    Fs.writeFileSync(vertexEndpoints, JSON.stringify({
      endpoints: [{ model: "google/text-embedding-005", upstream_model: "text-embedding-005", pricing: { prompt: "0.1" }, dimensions: 768, max_batch_items: 250 }]
    }))
  })
  afterAll(async () => {
    await server?.close()
    await fake?.close()
  })

  it("adds an azure provider from flags, shows its api version, tests it with the key sent as api-key and never shown", async () => {
    const added = await runCli([
      "providers", "add", "--slug", "azure-cli", "--adapter", "azure", "--base-url", fake.url, "--api-version", "2024-10-21",
      "--data-collection", "deny", "--file", deployments, "--key-from-env", "AZURE_KEY"
    ], { env })
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /adapter\s+azure/u)
    assert.match(added.stdout, /api version\s+2024-10-21/u)
    assert.notInclude(added.stdout, azureKey)
    const tested = await runCli(["providers", "test", "azure-cli"], { env })
    assert.strictEqual(tested.code, 0, tested.stderr)
    assert.match(tested.stdout, /openai\/text-embedding-3-small\s+embeddings\s+ok\s+200/u)
    const sent = fake.requests.at(-1)!
    assert.strictEqual(sent.headers["api-key"], azureKey)
    assert.include(sent.path, "api-version=2024-10-21")
    assert.notInclude(tested.stdout, azureKey)
  })

  it("adds an azure provider signed by Entra ID and a vertex provider with its project, location and credentials file", async () => {
    const entra = await runCli([
      "providers", "add", "--slug", "azure-entra", "--adapter", "azure", "--base-url", fake.url, "--api-version", "2024-10-21",
      "--auth", "entra", "--data-collection", "deny", "--file", deployments
    ], { env })
    assert.strictEqual(entra.code, 0, entra.stderr)
    assert.match(entra.stdout, /auth\s+entra/u)
    const vertex = await runCli([
      "providers", "add", "--slug", "vertex-cli", "--adapter", "vertex", "--project", "my-proj", "--location", "europe-west4",
      "--credentials-file", "/secrets/sa.json", "--data-collection", "deny", "--file", vertexEndpoints, "--json"
    ], { env })
    assert.strictEqual(vertex.code, 0, vertex.stderr)
    const provider = JSON.parse(vertex.stdout).data.provider
    assert.deepStrictEqual([provider.project, provider.location, provider.credentials_file], ["my-proj", "europe-west4", "/secrets/sa.json"])
  })

  it("refuses a vertex provider without its project, an azure one without its api version, and an auth it does not know", async () => {
    const noProject = await runCli(["providers", "add", "--slug", "v2", "--adapter", "vertex", "--location", "us-central1", "--data-collection", "deny"], { env })
    assert.notStrictEqual(noProject.code, 0)
    assert.include(noProject.stderr + noProject.stdout, "needs project")
    const noVersion = await runCli(["providers", "add", "--slug", "a2", "--adapter", "azure", "--base-url", fake.url, "--data-collection", "deny"], { env })
    assert.notStrictEqual(noVersion.code, 0)
    assert.include(noVersion.stderr + noVersion.stdout, "needs api_version")
    const badAuth = await runCli(["providers", "add", "--slug", "a3", "--adapter", "azure", "--auth", "password", "--data-collection", "deny"], { env })
    assert.strictEqual(badAuth.code, 2, badAuth.stderr)
  })
})
