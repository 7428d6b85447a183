import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { type RunningServer, startServer } from "../../../server/test/support/TestServer.ts"
import { runCli, tempDir } from "../support/Cli.ts"

interface Intern {
  readonly id: string
  readonly name: string
  readonly status: string
  readonly model: string | null
  readonly description: string | null
  readonly instructions: string | null
}

describe("switchyard interns (the binary against the gateway on 127.0.0.1)", () => {
  let server: RunningServer
  let env: Record<string, string>
  beforeAll(async () => {
    server = await startServer()
    env = { SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.apiKey }
  })
  afterAll(() => server?.close())

  const json = async <A>(args: ReadonlyArray<string>): Promise<A> => {
    const ran = await runCli([...args, "--json"], { env })
    assert.strictEqual(ran.code, 0, `${args.join(" ")}: ${ran.stderr}`)
    return JSON.parse(ran.stdout) as A
  }

  const waitFor = async (name: string, status: string) => {
    for (let i = 0; i < 100; i++) {
      const intern = await json<Intern>(["interns", "get", name])
      if (intern.status === status) return intern
      await new Promise((resolve) => setTimeout(resolve, 200))
    }
    throw new Error(`${name} never reached ${status}`)
  }

  it("creates, lists, updates, provisions, suspends and deletes an intern", async () => {
    const dir = tempDir("interns")
    const prompt = NodePath.join(dir, "prompt.md")
    Fs.writeFileSync(prompt, "Answer support tickets politely.\n")

    const created = await json<Intern>(["interns", "create", "support-bot", "--description", "Answers tickets", "--instructions-file", prompt])
    assert.strictEqual(created.status, "stopped")
    assert.strictEqual(created.instructions, "Answer support tickets politely.\n")

    const table = await runCli(["interns", "list"], { env })
    assert.strictEqual(table.code, 0, table.stderr)
    assert.match(table.stdout, /^ID\s+NAME\s+STATUS\s+MODEL\s+HOSTNAME\s+UPDATED/u)
    assert.match(table.stdout, new RegExp(`${created.id}\\s+support-bot\\s+stopped\\s+\\(workspace default\\)`, "u"))

    const updated = await runCli(["interns", "update", "support-bot", "--name", "helpdesk", "--model", "openai/gpt-4o", "--clear-description"], { env })
    assert.strictEqual(updated.code, 0, updated.stderr)
    assert.match(updated.stdout, /name\s+helpdesk/u)
    assert.match(updated.stdout, /model\s+openai\/gpt-4o/u)
    assert.match(updated.stdout, /description\s+-/u)
    const after = await json<Intern>(["interns", "get", created.id])
    assert.deepStrictEqual([after.name, after.model, after.description, after.instructions], ["helpdesk", "openai/gpt-4o", null, "Answer support tickets politely.\n"])

    const provisioned = await runCli(["interns", "provision", "helpdesk"], { env })
    assert.strictEqual(provisioned.code, 0, provisioned.stderr)
    await waitFor("helpdesk", "running")

    const suspended = await runCli(["interns", "suspend", "helpdesk"], { env })
    assert.strictEqual(suspended.code, 0, suspended.stderr)
    assert.include(suspended.stdout, "Suspended helpdesk")
    assert.strictEqual((await json<Intern>(["interns", "get", "helpdesk"])).status, "stopped")
    assert.deepStrictEqual(await json(["interns", "suspend", created.id]), { suspended: true })

    const deleted = await runCli(["interns", "delete", "helpdesk", "--erase-disk"], { env })
    assert.strictEqual(deleted.code, 0, deleted.stderr)
  })

  it("explains refusals with the server's message and an exit code", async () => {
    const missing = await runCli(["interns", "get", "00000000-0000-7000-8000-000000000000"], { env })
    assert.strictEqual(missing.code, 4)
    assert.match(missing.stderr, /^error: .+\(HTTP 404 InternNotFound\)\nhint: {2}/u)
    const noName = await runCli(["interns", "suspend", "nobody-here"], { env })
    assert.strictEqual(noName.code, 2)
    assert.include(noName.stderr, "No intern is named \"nobody-here\"")
    const badName = await runCli(["interns", "create", "Bad_Name"], { env })
    assert.strictEqual(badName.code, 2)
    assert.include(badName.stderr, "lowercase letters and digits")
    const nothing = await runCli(["interns", "update", "00000000-0000-7000-8000-000000000000"], { env })
    assert.strictEqual(nothing.code, 2)
    assert.include(nothing.stderr, "Nothing to change")
  })
})
