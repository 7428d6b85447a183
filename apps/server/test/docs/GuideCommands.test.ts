import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import { guideBlocks } from "../support/GuideBlocks.ts"
import { call, type RunningServer, startServer } from "../support/TestServer.ts"

// Every curl command of the README and the guides in docs/ runs against a real gateway, as a
// reader would paste it into a shell (bash, with the variables the page tells them to set), and
// answers below 400. A block that needs a cloud provider says so on the line above its fence with
// `<!-- not run: why -->`: it is left out, and few are.

/** The curl commands of a block: the lines that start one. */
const curls = (block: string): Array<string> => block.split("\n").filter((l) => l.startsWith("curl "))

const blocks = guideBlocks().filter((block) => curls(block.text).length > 0)

const end = "--- end of answer ---"

/**
 * Runs a block in bash, as a reader pastes it, with the page's variables, against the server:
 * each curl's answer, its status and body (curl writes the status on a line of its own after the
 * body). Asynchronous: the server answers in this process.
 */
const runBlock = async (block: string, server: RunningServer, env: Record<string, string>) => {
  const pointed = block.replaceAll("http://127.0.0.1:8080", server.origin).replaceAll("http://localhost:8080", server.origin)
  const script = `set -e\ncurl() { command curl -sS -w '\\n%{http_code}' "$@"; printf '\\n${end}\\n'; }\n${pointed}\n`
  const out = await new Promise<string>((resolve, reject) =>
    ChildProcess.execFile("bash", ["-c", script], { env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8", timeout: 20_000 }, (error, stdout, stderr) =>
      error === null ? resolve(stdout) : reject(new Error(`${error.message}\n${stderr}`))
    )
  )
  return out.split(`\n${end}\n`).slice(0, -1).map((answer) => {
    const at = answer.lastIndexOf("\n")
    return { status: Number(answer.slice(at + 1)), body: answer.slice(0, at) }
  })
}

describe("the README's and the guides' curl commands", () => {
  it("are many, and few are left out (each saying why)", () => {
    const run = blocks.filter((block) => !block.skipped).flatMap((block) => curls(block.text))
    const skipped = blocks.filter((block) => block.skipped)
    assert.isAtLeast(run.length, 8)
    // The ones left out need a cloud's account (Azure, Bedrock, Vertex: in the README and in each
    // guide) or an upstream's key.
    assert.isAtMost(skipped.length, 6, `left out: ${skipped.map((b) => `${b.page}:${b.line}`).join(", ")}`)
  })

  describe("against a gateway", () => {
    let server: RunningServer
    let env: Record<string, string>
    beforeAll(async () => {
      server = await startServer()
      const workspaces = await call(server, "GET", "/workspaces", server.managementKey)
      const list = (workspaces.body as { readonly data: ReadonlyArray<{ readonly id: string; readonly slug: string }> }).data
      env = {
        MANAGEMENT_KEY: server.managementKey,
        ADMIN_KEY: server.managementKey,
        API_KEY: server.apiKey,
        SWITCHYARD_API_KEY: server.apiKey,
        BASE: server.baseUrl,
        DEFAULT_ID: list.find((w) => w.slug === "default")!.id
      }
    })
    afterAll(async () => {
      await server?.close()
    })

    it("sees a command that fails: a planted call to a route that is not there answers 404", async () => {
      const answers = await runBlock(`curl -s http://127.0.0.1:8080/api/v1/no-such-route -H "Authorization: Bearer $API_KEY"`, server, env)
      assert.deepStrictEqual(answers.map((a) => a.status), [404])
    })

    for (const block of blocks.filter((b) => !b.skipped)) {
      it(`${block.page}:${block.line} answers each command below 400`, async () => {
        const commands = curls(block.text)
        const answers = await runBlock(block.text, server, env)
        assert.strictEqual(answers.length, commands.length, "every curl of the block ran")
        for (const [i, { status, body }] of answers.entries()) {
          assert.isBelow(status, 400, `${commands[i]}\n${body}`)
          assert.doesNotThrow(() => JSON.parse(body), `${commands[i]}: a JSON answer`)
        }
      })
    }
  })
})
