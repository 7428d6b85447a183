import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Scope } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as DataDirLock from "../../src/store/sqlite/DataDirLock.ts"
import { dataDirWithStore } from "../reliability/GatewayProcess.ts"
import { tempDir } from "../support/TestServer.ts"
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

const holderScript = NodePath.join(import.meta.dirname, "fixtures", "DataDirLockHolder.ts")

/**
 * A process holding the lock of `dataDir`, once it says it has it. Its parent is a `sleep` that
 * never waits for it, so once killed it stays visible (a zombie) as long as that parent lives, as
 * under a supervisor that has not reaped it yet.
 */
const holder = async (dataDir: string) => {
  const parent = ChildProcess.spawn("sh", ["-c", `"$0" "$1" "$2" & echo "pid $!"; exec sleep 600`, process.execPath, holderScript, dataDir], {
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  parent.stderr.on("data", (chunk) => (stderr += String(chunk)))
  const pid = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the holder did not take the lock: ${stdout} ${stderr}`)), 30_000)
    parent.stdout.on("data", (chunk) => {
      stdout += String(chunk)
      const said = /^pid (\d+)$/mu.exec(stdout)
      if (said !== null && /^locked$/mu.test(stdout)) {
        clearTimeout(timer)
        resolve(Number(said[1]))
      }
    })
  })
  // Dead as its parent would be told (every thread gone, so its files and locks closed) and
  // still visible: a zombie.
  const status = () => Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const dead = () => /^State:\s+Z/mu.test(status()) && /^Threads:\s+1$/mu.test(status())
  const kill = async () => {
    process.kill(pid, "SIGKILL")
    while (!dead()) await new Promise((resolve) => setTimeout(resolve, 5))
  }
  const close = () => parent.kill("SIGKILL")
  return { pid, kill, dead, close }
}

/** Takes the lock in this process; the exit, and a way to let it go. */
const acquireHere = async (dataDir: string) => {
  const scope = Effect.runSync(Scope.make())
  const exit = await Effect.runPromiseExit(Scope.provide(DataDirLock.acquire(dataDir), scope))
  return { exit, release: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
}

describe("the data-directory lock", () => {
  it("refuses while a live process holds it, naming it; after that process is killed with SIGKILL it is taken at once", async () => {
    const dataDir = tempDir("lock")
    for (let round = 0; round < 5; round++) {
      const held = await holder(dataDir)
      try {
        const refused = await acquireHere(dataDir)
        assert.isTrue(Exit.isFailure(refused.exit), `round ${round}: taken while process ${held.pid} holds it`)
        assert.include(String(refused.exit), `in use by process ${held.pid} on `)
        await held.kill()
        // Started again at once: the dead holder is still there as a zombie, its pid still taken.
        assert.isTrue(held.dead())
        const taken = await acquireHere(dataDir)
        assert.isTrue(Exit.isSuccess(taken.exit), `round ${round}: ${String(taken.exit)}`)
        await taken.release()
      } finally {
        held.close()
      }
    }
  }, 60_000)

  it("held by this process, it is refused to another one until it is released", async () => {
    const dataDir = tempDir("lock")
    const taken = await acquireHere(dataDir)
    assert.isTrue(Exit.isSuccess(taken.exit))
    const child = ChildProcess.spawnSync(process.execPath, [holderScript, dataDir], { encoding: "utf8", timeout: 30_000 })
    assert.strictEqual(child.status, 1)
    assert.include(child.stderr, `the data directory ${dataDir} is in use by process ${process.pid} on `)
    await taken.release()
    const next = await holder(dataDir)
    await next.kill()
    next.close()
  }, 60_000)
})

describe("one gateway per data directory", () => {
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
