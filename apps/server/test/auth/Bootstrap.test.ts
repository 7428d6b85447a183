import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { dataDirWithStore } from "../reliability/GatewayProcess.ts"
import { freePort, startServerProcess } from "../support/ServerProcess.ts"

const main = NodePath.join(import.meta.dirname, "..", "..", "src", "main.ts")

/**
 * Runs the gateway's `main.ts` until it exits on its own (or 60 s pass); its exit code and both streams.
 */
const runToExit = async (env: Record<string, string>) => {
  const port = await freePort()
  const child = ChildProcess.spawn(process.execPath, [main], {
    env: { ...process.env, SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_PORT: String(port), DATABASE_URL: "", SWITCHYARD_DATA_DIR: dataDirWithStore(), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += String(chunk)))
  child.stderr.on("data", (chunk) => (stderr += String(chunk)))
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000)
  const code = await new Promise<number | null>((resolve) => child.once("exit", (exitCode) => resolve(exitCode)))
  clearTimeout(timer)
  return { code, stdout, stderr }
}

describe("bootstrap secrets", () => {
  const refused = [
    { variable: "SWITCHYARD_BOOTSTRAP_API_KEY", secret: "short-secret", shows: "short-secret" },
    { variable: "SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY", secret: "correct horse battery staple", shows: "battery" }
  ]
  for (const { secret, shows, variable } of refused) {
    it(`${variable}=${JSON.stringify(secret)}, which no key could use, stops the start with one line naming it and the rule`, async () => {
      const run = await runToExit({ [variable]: secret })
      assert.strictEqual(run.code, 1)
      const lines = run.stderr.trim().split("\n")
      assert.lengthOf(lines, 1, run.stderr)
      assert.include(lines[0], `${variable} must be ${KeySecret.rule}`)
      assert.notInclude(run.stdout + run.stderr, shows)
      assert.notInclude(run.stdout, "Switchyard created")
    }, 90_000)
  }

  it("the same secret for both keys is refused: every key has its own", async () => {
    const secret = KeySecret.generate()
    const run = await runToExit({ SWITCHYARD_BOOTSTRAP_API_KEY: secret, SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: secret })
    assert.strictEqual(run.code, 1)
    assert.lengthOf(run.stderr.trim().split("\n"), 1)
    assert.include(run.stderr, "SWITCHYARD_BOOTSTRAP_API_KEY must differ from SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY")
    assert.notInclude(run.stdout + run.stderr, secret)
  }, 90_000)

  it("a secret given through the environment is never printed; a generated one is printed once and works", async () => {
    const given = "my-own-api-key-0123456789"
    const server = await startServerProcess({ DATABASE_URL: "", SWITCHYARD_DATA_DIR: dataDirWithStore(), SWITCHYARD_BOOTSTRAP_API_KEY: given, SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: "" })
    try {
      const output = server.output()
      assert.notInclude(output, given)
      assert.include(output, "API key:        from SWITCHYARD_BOOTSTRAP_API_KEY (not printed)")
      const printed = [...output.matchAll(/management key: (sk-sy-v1-[0-9a-f]{64})/gu)].map((m) => m[1]!)
      assert.lengthOf(printed, 1)
      const current = (key: string) => fetch(`${server.baseUrl}/key`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => ({ status: r.status, body: await r.json() as any }))
      const management = await current(printed[0]!)
      assert.strictEqual(management.status, 200)
      assert.isTrue(management.body.data.is_management_key)
      const standard = await current(given)
      assert.strictEqual(standard.status, 200)
      assert.isFalse(standard.body.data.is_management_key)
    } finally {
      await server.stop()
    }
  }, 90_000)
  it("a bad secret left in the environment after the first start does not stop a later start: it is ignored, with a warning", async () => {
    const dataDir = dataDirWithStore()
    try {
      const first = await startServerProcess({ DATABASE_URL: "", SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_BOOTSTRAP_API_KEY: "", SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: "" })
      assert.include(first.output(), "Switchyard created")
      await first.stop()
      const later = await startServerProcess({ DATABASE_URL: "", SWITCHYARD_DATA_DIR: dataDir, SWITCHYARD_BOOTSTRAP_API_KEY: "short-secret", SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: "" })
      try {
        const output = later.output()
        assert.include(output, "SWITCHYARD_BOOTSTRAP_API_KEY is ignored")
        assert.notInclude(output, "short-secret")
        assert.notInclude(output, "Switchyard created")
      } finally {
        await later.stop()
      }
    } finally {
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
  }, 120_000)
})
