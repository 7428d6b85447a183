import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { endpoint, provider } from "../../../server/test/embeddings/Gateway.ts"
import * as FakeOpenAi from "../../../server/test/fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../../../server/test/fakes/FakeUpstream.ts"
import { type RunningServer, startServer, tempDir } from "../../../server/test/support/TestServer.ts"
import { runCli } from "../support/Cli.ts"

const secret = "sk-cli-managed-credential-5e1d"

describe("switchyard providers and switchyard audit (the binary against the gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let upstream: FakeUpstream.FakeServer
  let env: Record<string, string>
  let file: string
  beforeAll(async () => {
    upstream = await FakeOpenAi.start({ apiKey: secret })
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey, ACME_CREDENTIAL: secret }
    file = NodePath.join(tempDir("cli-provider"), "acme.json")
    const { api_key_env: _, ...body } = provider("acme", upstream.url, {}, [endpoint("acme/cli-embed", { upstream_model: "cli-embed" })])
    Fs.writeFileSync(file, JSON.stringify(body))
  })
  afterAll(async () => {
    await server?.close()
    await upstream?.close()
  })

  it("adds, lists, tests, updates, disables and removes a provider; the credential never shows", async () => {
    const added = await runCli(["providers", "add", "--file", file, "--key-from-env", "ACME_CREDENTIAL", "--json"], { env })
    assert.strictEqual(added.code, 0, added.stderr)
    assert.deepStrictEqual(JSON.parse(added.stdout).data.api_key, { set: true, last4: secret.slice(-4) })
    const listed = await runCli(["providers", "list"], { env })
    assert.strictEqual(listed.code, 0, listed.stderr)
    assert.match(listed.stdout, /^acme\s+acme\s+api\s+active\s+…5e1d/mu)
    assert.match(listed.stdout, /^local\s.*\sconfig\s/mu)
    const tested = await runCli(["providers", "test", "acme"], { env })
    assert.strictEqual(tested.code, 0, tested.stderr)
    assert.match(tested.stdout, /acme\/cli-embed\s+embeddings\s+ok\s+200\s+\d+ ms/u)
    const renamed = await runCli(["providers", "update", "acme", "--name", "Acme Cloud", "--json"], { env })
    assert.strictEqual(JSON.parse(renamed.stdout).data.name, "Acme Cloud")
    assert.strictEqual((await runCli(["providers", "update", "acme"], { env })).code, 2)
    // `--upstream-url` is the provider's address; `--base-url` stays the gateway's own.
    const moved = await runCli(["providers", "update", "acme", "--upstream-url", "http://127.0.0.1:9/v1", "--json"], { env })
    assert.strictEqual(JSON.parse(moved.stdout).data.provider.base_url, "http://127.0.0.1:9/v1", moved.stderr)
    const missing = await runCli(["providers", "rm", "nobody"], { env })
    assert.strictEqual(missing.code, 4)
    assert.include(missing.stderr, "switchyard providers list")
    assert.notInclude(missing.stderr, "keys list")
    const disabled = await runCli(["providers", "disable", "acme"], { env })
    assert.strictEqual(disabled.code, 0, disabled.stderr)
    assert.match((await runCli(["providers", "list"], { env })).stdout, /^acme\s+Acme Cloud\s+api\s+disabled/mu)
    const refused = await runCli(["providers", "rm", "local"], { env })
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, "HTTP 409")
    const standard = await runCli(["providers", "disable", "acme"], { env: { ...env, SWITCHYARD_API_KEY: server.apiKey } })
    assert.strictEqual(standard.code, 3)
    assert.strictEqual((await runCli(["providers", "rm", "acme"], { env })).code, 0)
    for (const ran of [added, listed, tested, renamed, disabled]) assert.notInclude(ran.stdout + ran.stderr, secret)
  })

  it("reads the audit log with filters and verifies its chain", async () => {
    const all = await runCli(["audit", "--json"], { env })
    assert.strictEqual(all.code, 0, all.stderr)
    const actions = (JSON.parse(all.stdout).data as Array<{ action: string }>).map((e) => e.action)
    assert.includeMembers(actions, ["provider.create", "provider.update", "provider.disable", "provider.delete"])
    const keys = await runCli(["audit", "--action", "provider.*", "--since", "2000-01-01", "--limit", "2", "--json"], { env })
    assert.deepStrictEqual((JSON.parse(keys.stdout).data as Array<{ action: string }>).map((e) => e.action), ["provider.delete", "provider.disable"])
    const table = await runCli(["audit", "--action", "provider.create"], { env })
    assert.match(table.stdout, /^ID\s+AT\s+ACTION\s+TARGET\s+ACTOR\s+IP$/mu)
    assert.match(table.stdout, /provider\.create\s+provider acme\s+Bootstrap management key\s+127\.0\.0\.1/u)
    const verified = await runCli(["audit", "verify"], { env })
    assert.strictEqual(verified.code, 0, verified.stderr)
    assert.match(verified.stdout, /chain holds: \d+ entries checked/u)
    assert.strictEqual((await runCli(["audit", "--since", "yesterday"], { env })).code, 1)
  })
})
