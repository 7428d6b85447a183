import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer } from "../../../server/test/support/TestServer.ts"
import { runCli, runInTerminal, stripAnsi } from "../support/Cli.ts"

describe("switchyard workspaces, budgets, generation and activity (the binary against the gateway)", () => {
  let server: RunningServer
  let env: Record<string, string>
  beforeAll(async () => {
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey }
  })
  afterAll(() => server?.close())

  it("creates and lists workspaces, adds members and sets budgets", async () => {
    const created = await runCli(["workspaces", "create", "team-b", "--name", "Team B"], { env })
    assert.strictEqual(created.code, 0, created.stderr)
    assert.match(created.stdout, /slug\s+team-b/u)
    const listed = await runCli(["workspaces", "list"], { env })
    assert.match(listed.stdout.split("\n")[0]!, /^SLUG\s+NAME\s+ID\s+CREATED$/u)
    assert.include(listed.stdout, "team-b")
    assert.strictEqual((await runCli(["workspaces", "add-members", "team-b", "user_bea", "user_bo"], { env })).stdout.trim(), "Added 2 member(s).")
    const members = JSON.parse((await runCli(["workspaces", "members", "team-b", "--json"], { env })).stdout)
    assert.strictEqual(members.data.length, 3)
    const set = await runCli(["budgets", "set", "team-b", "monthly", "25"], { env })
    assert.strictEqual(set.code, 0, set.stderr)
    assert.match(set.stdout, /monthly\s+\$25\.00/u)
    const refused = await runCli(["budgets", "set", "team-b", "daily", "30"], { env })
    assert.strictEqual(refused.code, 1)
    assert.include(refused.stderr, "less than the monthly budget")
    assert.match(created.stdout, /embeddings cache\s+off/u)
    const cached = await runCli(["workspaces", "update", "team-b", "--cache", "on"], { env })
    assert.strictEqual(cached.code, 0, cached.stderr)
    assert.match(cached.stdout, /embeddings cache\s+on/u)
    assert.isTrue(JSON.parse((await runCli(["workspaces", "get", "team-b", "--json"], { env })).stdout).data.cache)
    const back = await runCli(["workspaces", "update", "team-b", "--cache", "config"], { env })
    assert.match(back.stdout, /embeddings cache\s+off/u)
    const routed = await runCli(["workspaces", "update", "team-b", "--ignore", "alpha, beta", "--data-collection", "deny", "--zdr", "on"], { env })
    assert.strictEqual(routed.code, 0, routed.stderr)
    assert.match(routed.stdout, /ignored providers\s+alpha, beta/u)
    assert.match(routed.stdout, /data collection\s+deny/u)
    assert.match(routed.stdout, /ZDR only\s+yes/u)
    const restored = JSON.parse((await runCli(["workspaces", "update", "team-b", "--ignore", "config", "--zdr", "config", "--json"], { env })).stdout)
    assert.deepStrictEqual([restored.data.ignore, restored.data.zdr, restored.data.data_collection], [[], false, "deny"])
    const other = await runCli(["workspaces", "create", "team-c", "--cache", "on"], { env })
    assert.match(other.stdout, /embeddings cache\s+on/u)
    const missing = await runCli(["workspaces", "get", "no-such-team"], { env })
    assert.strictEqual(missing.code, 4)
  })

  it("shows a generation and the daily activity as a table with a bar per day, or JSON", async () => {
    const served = await fetch(`${server.baseUrl}/embeddings`, {
      method: "POST",
      headers: { authorization: `Bearer ${server.apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ model: "switchyard/local-embed", input: "hello there" })
    }).then((r) => r.json() as Promise<any>)
    const generation = await runCli(["generation", served.id], { env: { ...env, SWITCHYARD_API_KEY: server.apiKey } })
    assert.strictEqual(generation.code, 0, generation.stderr)
    assert.match(generation.stdout, /model\s+switchyard\/local-embed/u)
    assert.match(generation.stdout, /cached\s+no/u)
    const json = JSON.parse((await runCli(["activity", "--json"], { env })).stdout)
    assert.strictEqual(json.data[0].model, "switchyard/local-embed")
    const terminal = await runInTerminal(["activity"], { env })
    assert.strictEqual(terminal.code, 0, terminal.output)
    const today = new Date().toISOString().slice(0, 10)
    assert.match(stripAnsi(terminal.output), new RegExp(`${today}\\s+1\\s+\\d+\\s+\\$0\\.00\\s+\\$0\\.00`, "u"))
    const piped = await runCli(["activity"], { env })
    assert.notInclude(piped.stdout, "█")
  })
})
