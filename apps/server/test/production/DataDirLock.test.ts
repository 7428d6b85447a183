import { assert, describe, it } from "@effect/vitest"
import { dataDirWithStore } from "../reliability/GatewayProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import { healthy, launch } from "../support/BundleProcess.ts"

const managementKey = `sk-sy-v1-${"2".repeat(64)}`

const start = async (dataDir: string) => {
  const port = await freePort()
  const gateway = launch({
    SWITCHYARD_HOST: "127.0.0.1",
    SWITCHYARD_PORT: String(port),
    SWITCHYARD_DATA_DIR: dataDir,
    DATABASE_URL: "",
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey
  })
  return { gateway, origin: `http://127.0.0.1:${port}` }
}

const createKey = (origin: string, name: string) =>
  fetch(`${origin}/api/v1/keys`, {
    method: "POST",
    headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
    body: JSON.stringify({ name })
  }).then((r) => r.status)

const keyNames = (origin: string) =>
  fetch(`${origin}/api/v1/keys`, { headers: { authorization: `Bearer ${managementKey}` } })
    .then((r) => r.json() as Promise<{ data: Array<{ name: string }> }>)
    .then((body) => body.data.map((k) => k.name))

describe("one process per PGlite data directory", () => {
  it("a second process stops at start with one line naming the directory and the holder; nothing either wrote is lost", async () => {
    const dataDir = dataDirWithStore()
    const first = await start(dataDir)
    try {
      await healthy(first.gateway, first.origin)
      assert.strictEqual(await createKey(first.origin, "before the second"), 201)

      const second = await start(dataDir)
      const exit = await second.gateway.exited
      assert.strictEqual(exit.code, 1)
      const lines = second.gateway.stderr().split("\n").filter((l) => l.trim() !== "")
      assert.strictEqual(lines.length, 1, second.gateway.stderr())
      assert.include(lines[0], `the data directory ${dataDir} is in use by process ${first.gateway.child.pid}`)
      assert.notInclude(second.gateway.stdout(), "sk-sy-v1-")

      assert.strictEqual(await createKey(first.origin, "after the second"), 201)
    } finally {
      await first.gateway.stop()
    }
    assert.strictEqual((await first.gateway.exited).code, 0)

    const third = await start(dataDir)
    try {
      await healthy(third.gateway, third.origin)
      const names = await keyNames(third.origin)
      assert.includeMembers(names, ["before the second", "after the second"])
    } finally {
      await third.gateway.stop()
    }
  }, 480_000)

  it("the lock of a process that was killed is taken over at the next start", async () => {
    const dataDir = dataDirWithStore()
    const first = await start(dataDir)
    await healthy(first.gateway, first.origin)
    assert.strictEqual(await createKey(first.origin, "kept"), 201)
    first.gateway.child.kill("SIGKILL")
    await first.gateway.exited
    const next = await start(dataDir)
    try {
      await healthy(next.gateway, next.origin)
      assert.include(await keyNames(next.origin), "kept")
    } finally {
      await next.gateway.stop()
    }
  }, 480_000)
})
