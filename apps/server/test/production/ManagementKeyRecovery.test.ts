import { assert, describe, it } from "@effect/vitest"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { dataDirWithStore } from "../reliability/GatewayProcess.ts"
import { type BundleProcess, healthy, launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"

/** Runs `switchyard-server mint-management-key ...` (the bundle) to its exit. */
const mint = async (env: Record<string, string>, args: ReadonlyArray<string> = []) => {
  const run = launch(env, [], { args: ["mint-management-key", ...args] })
  const timer = setTimeout(() => run.child.kill("SIGKILL"), 120_000)
  const exit = await run.exited
  clearTimeout(timer)
  return { code: exit.code, stdout: run.stdout(), stderr: run.stderr() }
}

const listKeys = (origin: string, key: string) =>
  fetch(`${origin}/api/v1/keys`, { headers: { authorization: `Bearer ${key}` } }).then(async (r) => ({ status: r.status, body: await r.json() as any }))

const warnings = (gateway: BundleProcess) =>
  gateway.stdout().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line)).filter((line) => line.level === "warn")
    .map((line) => line.message as string)

describe("recovering a lost management key (switchyard-server mint-management-key, embedded store)", () => {
  it("refuses while the gateway holds the data directory; once it is stopped, mints a working key printed once; a later bootstrap secret that is not a key is ignored with a warning naming the command", async () => {
    const dataDir = dataDirWithStore()
    const managementKey = KeySecret.generate()
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const env = { SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_PORT: String(port), SWITCHYARD_DATA_DIR: dataDir, DATABASE_URL: "", SWITCHYARD_LOG_FORMAT: "json" }
    const first = launch({ ...env, SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey })
    try {
      await healthy(first, origin)
      const refused = await mint(env)
      assert.strictEqual(refused.code, 1)
      const lines = refused.stderr.split("\n").filter((line) => line !== "")
      assert.strictEqual(lines.length, 1, refused.stderr)
      assert.match(lines[0]!, new RegExp(`^switchyard: cannot make a management key: a gateway is running on ${dataDir} \\(process ${first.child.pid} `, "u"))
      assert.include(lines[0]!, "stop the gateway, run this again")
      assert.notInclude(refused.stdout, KeySecret.prefix)
    } finally {
      await first.stop()
    }

    const unknownWorkspace = await mint(env, ["--workspace", "nope"])
    assert.strictEqual(unknownWorkspace.code, 1)
    assert.strictEqual(unknownWorkspace.stderr.trim(), "switchyard: cannot make a management key: no workspace `nope` with an administrator in this store (--workspace names a workspace by its slug)")

    const minted = await mint(env, ["--name", "Ops laptop"])
    assert.strictEqual(minted.code, 0, minted.stderr)
    const secret = /^ {2}management key: (sk-sy-v1-[0-9a-f]{64})$/mu.exec(minted.stdout)?.[1]
    assert.isDefined(secret, minted.stdout)
    assert.include(minted.stdout, "for the workspace `default`. It is shown only this once")

    // The same bootstrap secret again (a deployment that always sets it) is in effect: no warning.
    const same = launch({ ...env, SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey })
    try {
      await healthy(same, origin)
      assert.deepStrictEqual(warnings(same), [])
    } finally {
      await same.stop()
    }

    const lostKeyRestart = launch({ ...env, SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: KeySecret.generate() })
    try {
      await healthy(lostKeyRestart, origin)
      assert.deepStrictEqual(warnings(lostKeyRestart), [
        "SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY is ignored: it applies only to the first start, on an empty store, and this store already has its workspace and keys. " +
        "To get a new management key, stop the gateway and run `npx -y pnpm@10 mint-management-key` (with PostgreSQL it may keep running)."
      ])
      const listed = await listKeys(origin, secret!)
      assert.strictEqual(listed.status, 200, JSON.stringify(listed.body))
      const names = listed.body.data.map((k: { name: string }) => k.name)
      assert.includeMembers(names, ["Ops laptop", "Bootstrap management key"])
      assert.notInclude(lostKeyRestart.stdout(), secret!)
    } finally {
      await lostKeyRestart.stop()
    }
  }, 600_000)
})
