import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer } from "../../../server/test/support/TestServer.ts"
import { runCli, runInTerminal, stripAnsi } from "../support/Cli.ts"

describe("switchyard keys (the binary against the gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let env: Record<string, string>
  beforeAll(async () => {
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey }
  })
  afterAll(() => server?.close())

  it("lists keys as a table", async () => {
    const ran = await runCli(["keys", "list"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const lines = ran.stdout.trim().split("\n")
    assert.match(lines[0]!, /^HASH\s+NAME\s+LABEL\s+STATUS\s+KIND\s+REACH\s+LIMIT\s+REMAINING\s+USAGE\s+CREATED\s+EXPIRES$/u)
    assert.strictEqual(lines.length, 3)
    assert.match(
      lines[1]!,
      /^[0-9a-f]{12}\s+Bootstrap management key\s+sk-sy-v1-\w{3}\.\.\.\w{3}\s+active\s+management\s+user's workspaces\s+-\s+-\s+\$0\.00\s/u
    )
    assert.match(lines[2]!, /Bootstrap API key\s+\S+\s+active\s+standard\s+its workspace\s/u)
    assert.notInclude(ran.stdout, server.managementKey)
  })

  it("lists keys as JSON with --json", async () => {
    const ran = await runCli(["keys", "list", "--json"], { env })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const body = JSON.parse(ran.stdout) as { data: Array<{ name: string; hash: string }> }
    assert.deepStrictEqual(body.data.map((k) => k.name), ["Bootstrap management key", "Bootstrap API key"])
    assert.match(body.data[0]!.hash, /^[0-9a-f]{64}$/u)
  })

  it("prints a bold table header on a terminal", async () => {
    const ran = await runInTerminal(["keys", "list"], { env })
    assert.strictEqual(ran.code, 0, ran.output)
    assert.include(ran.output, "\u001b[1mHASH")
    assert.include(stripAnsi(ran.output), "Bootstrap API key")
  })

  it("takes --base-url and --api-key over the environment, before or after the command", async () => {
    const flags = ["--base-url", server.baseUrl, "--api-key", server.managementKey]
    const wrongEnv = { SWITCHYARD_BASE_URL: "http://127.0.0.1:9/api/v1", SWITCHYARD_API_KEY: server.apiKey }
    for (const args of [[...flags, "keys", "list", "--json"], ["keys", "list", "--json", ...flags]]) {
      const ran = await runCli(args, { env: wrongEnv })
      assert.strictEqual(ran.code, 0, ran.stderr)
      assert.strictEqual((JSON.parse(ran.stdout) as { data: Array<unknown> }).data.length, 2)
    }
  })

  it("exits 3 with the server's message and a hint for a standard key or no key", async () => {
    const standard = await runCli(["keys", "list"], { env: { ...env, SWITCHYARD_API_KEY: server.apiKey } })
    assert.strictEqual(standard.code, 3)
    assert.strictEqual(standard.stdout, "")
    assert.match(standard.stderr, /^error: .*management key.*\(HTTP 403 Forbidden\)\nhint: {2}/u)
    const none = await runCli(["keys", "list"], { env: { SWITCHYARD_BASE_URL: server.baseUrl } })
    assert.strictEqual(none.code, 3)
    assert.include(none.stderr, "HTTP 401")
    assert.include(none.stderr, "No key was given. Pass --api-key KEY or set SWITCHYARD_API_KEY.")
  })

  it("exits 4 for a workspace that is not yours and 2 for bad flags", async () => {
    const missing = await runCli(["keys", "list", "--workspace", "00000000-0000-4000-8000-000000000000"], { env })
    assert.strictEqual(missing.code, 4)
    assert.include(missing.stderr, "HTTP 404")
    const badFlag = await runCli(["keys", "list", "--offset", "x"], { env })
    assert.strictEqual(badFlag.code, 2)
    assert.include(badFlag.stderr, "--offset")
    const unknown = await runCli(["keys", "lst"], { env })
    assert.strictEqual(unknown.code, 2)
    assert.include(unknown.stderr, "Did you mean")
  })

  it("exits 6 and names the address when the gateway cannot be reached", async () => {
    const ran = await runCli(["keys", "list"], { env: { ...env, SWITCHYARD_BASE_URL: `${server.origin.replace(/:\d+$/u, ":1")}/api/v1` } })
    assert.strictEqual(ran.code, 6)
    assert.include(ran.stderr, "Cannot reach the gateway at http://127.0.0.1:1/api/v1")
    assert.include(ran.stderr, "pnpm start")
  })

  it("exits 2 for a base URL that is not one", async () => {
    const ran = await runCli(["keys", "list", "--base-url", "localhost:8080"], { env })
    assert.strictEqual(ran.code, 2)
    assert.include(ran.stderr, "must start with http:// or https://")
  })

  it("creates a management key of workspace scope and says what each key reaches", async () => {
    const created = await runCli(["keys", "create", "team-admin", "--management", "--scope", "workspace", "--json"], { env })
    assert.strictEqual(created.code, 0, created.stderr)
    const body = JSON.parse(created.stdout) as { data: { kind: string; scope: string; hash: string; workspace_id: string } }
    assert.deepInclude(body.data, { kind: "management", scope: "workspace" })
    const shown = await runCli(["keys", "get", body.data.hash], { env })
    assert.strictEqual(shown.code, 0, shown.stderr)
    assert.match(shown.stdout, new RegExp(`reach\\s+workspace ${body.data.workspace_id} only \\(scope workspace\\)`, "u"))
    assert.strictEqual((await runCli(["keys", "delete", body.data.hash], { env })).code, 0)
  })

  it("creates a key, shows its secret once, finds it by a prefix of its hash, updates and deletes it", async () => {
    const created = await runCli(["keys", "create", "ci-pipeline", "--limit", "25", "--limit-reset", "monthly"], { env })
    assert.strictEqual(created.code, 0, created.stderr)
    assert.match(created.stdout, /name\s+ci-pipeline/u)
    assert.match(created.stdout, /limit\s+\$25\.00/u)
    const secret = /The secret is shown only this once; store it now:\n {2}(sk-sy-v1-[0-9a-f]{64})\n/u.exec(created.stdout)?.[1]
    assert.isDefined(secret)
    const hash = /hash\s+([0-9a-f]{64})/u.exec(created.stdout)![1]!

    const got = await runCli(["keys", "get", hash.slice(0, 8), "--json"], { env })
    assert.strictEqual(got.code, 0, got.stderr)
    assert.strictEqual((JSON.parse(got.stdout) as { data: { hash: string } }).data.hash, hash)

    const updated = await runCli(["keys", "update", hash.slice(0, 10), "--disable", "--limit", "none"], { env })
    assert.strictEqual(updated.code, 0, updated.stderr)
    assert.match(updated.stdout, /status\s+disabled/u)
    assert.match(updated.stdout, /limit\s+none/u)
    const refused = await runCli(["keys", "current"], { env: { ...env, SWITCHYARD_API_KEY: secret! } })
    assert.strictEqual(refused.code, 3)

    const active = await runCli(["keys", "list"], { env })
    assert.notInclude(active.stdout, "ci-pipeline")
    const all = await runCli(["keys", "list", "--include-disabled"], { env })
    assert.match(all.stdout, new RegExp(`${hash.slice(0, 12)}\\s+ci-pipeline\\s+\\S+\\s+disabled`, "u"))

    const deleted = await runCli(["keys", "delete", hash], { env })
    assert.strictEqual(deleted.code, 0, deleted.stderr)
    const gone = await runCli(["keys", "get", hash], { env })
    assert.strictEqual(gone.code, 4)
    const ambiguous = await runCli(["keys", "get", "zz"], { env })
    assert.strictEqual(ambiguous.code, 2)
    assert.include(ambiguous.stderr, "is not a key hash")
  })

  it("shows the calling key with keys current", async () => {
    const ran = await runCli(["keys", "current", "--json"], { env: { ...env, SWITCHYARD_API_KEY: server.apiKey } })
    assert.strictEqual(ran.code, 0, ran.stderr)
    const { data } = JSON.parse(ran.stdout) as { data: { name: string; is_management_key: boolean } }
    assert.deepStrictEqual([data.name, data.is_management_key], ["Bootstrap API key", false])
  })

  it("shows and adds credits", async () => {
    const added = await runCli(["credits", "add", "12.5", "--note", "test budget"], { env })
    assert.strictEqual(added.code, 0, added.stderr)
    assert.match(added.stdout, /^credits\s+\$12\.50\nusage\s+\$0\.00\navailable\s+\$12\.50$/mu)
    const shown = JSON.parse((await runCli(["credits", "show", "--json"], { env })).stdout) as { data: { total_credits: number } }
    assert.strictEqual(shown.data.total_credits, 12.5)
    const bad = await runCli(["credits", "add", "lots"], { env })
    assert.strictEqual(bad.code, 2)
    assert.include(bad.stderr, "amount must be a decimal")
  })

  it("shows help with examples and exits 0", async () => {
    const ran = await runCli(["keys", "list", "--help"])
    assert.strictEqual(ran.code, 0)
    assert.include(ran.stdout, "EXAMPLES")
    assert.include(ran.stdout, "switchyard keys list --include-disabled --json")
  })
})
