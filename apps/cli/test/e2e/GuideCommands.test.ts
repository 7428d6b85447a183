import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import { fileURLToPath } from "node:url"
import { guideBlocks } from "../../../server/test/support/GuideBlocks.ts"
import { type RunningServer, startServer, tempDir } from "../../../server/test/support/TestServer.ts"

// Every `switchyard` command of the README and the guides in docs/ runs against a real gateway, as
// a reader would paste its block into a shell (bash, the binary in place of `npx -y pnpm@10 exec
// switchyard`, the keys the page tells them to export already in the environment), and exits 0.
// The server's docs test does the same for the curl commands. A block that needs what a test
// machine has not (a provider's key, a file of the reader's own) says so on the line above its
// fence with `<!-- not run: why -->`.

const binPath = fileURLToPath(new URL("../../bin/switchyard.mjs", import.meta.url))
const invocation = /^(?:npx -y pnpm@10 exec )?switchyard /u

const blocks = guideBlocks().filter((block) => block.text.split("\n").some((l) => invocation.test(l)))

/**
 * Runs a block in bash in `cwd`: the binary for the command, and the keys the page exports as
 * placeholders (`export X=sk-sy-v1-...`) taken from the environment instead.
 */
const runBlock = (block: string, cwd: string, env: Record<string, string>) => {
  const script = block
    .split("\n")
    .filter((line) => !/^export [A-Z_]+=sk-sy-v1-/u.test(line))
    .map((line) => line.replace(invocation, `"${process.execPath}" "${binPath}" `))
    .join("\n")
  return new Promise<{ readonly code: number; readonly output: string }>((resolve) =>
    ChildProcess.execFile("bash", ["-c", `set -e\n${script}\n`], { cwd, env: { PATH: process.env.PATH ?? "", ...env }, encoding: "utf8", timeout: 60_000 }, (error, stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === "number" ? error.code : 1, output: `${stdout}${stderr}` })
    )
  )
}

describe("the README's and the guides' switchyard commands", () => {
  it("are there, and few are left out", () => {
    assert.isAtLeast(blocks.filter((b) => !b.skipped).length, 8)
    assert.isAtMost(blocks.filter((b) => b.skipped).length, 3, blocks.filter((b) => b.skipped).map((b) => `${b.page}:${b.line}`).join(", "))
  })

  describe("against a gateway", () => {
    let server: RunningServer
    let cwd: string
    let env: Record<string, string>
    beforeAll(async () => {
      server = await startServer()
      // One directory for the run: a block may read the file an earlier one of its page wrote.
      cwd = tempDir("cli-guide")
      env = {
        SWITCHYARD_BASE_URL: server.baseUrl,
        SWITCHYARD_API_KEY: server.apiKey,
        MANAGEMENT_KEY: server.managementKey,
        API_KEY: server.apiKey,
        NO_COLOR: "1"
      }
    }, 60_000)
    afterAll(async () => {
      await server?.close()
    })

    it("sees a command that fails: a planted one for a model that is not there exits non-zero", async () => {
      const ran = await runBlock("npx -y pnpm@10 exec switchyard embed -m no-such/model hello", cwd, env)
      assert.notStrictEqual(ran.code, 0, ran.output)
    })

    for (const block of blocks.filter((b) => !b.skipped)) {
      it(`${block.page}:${block.line} exits 0`, async () => {
        const ran = await runBlock(block.text, cwd, env)
        assert.strictEqual(ran.code, 0, `${block.text}\n${ran.output}`)
      }, 120_000)
    }
  })
})
