import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { freshDatabase, dropDatabase, storeKind, tempDir } from "../support/TestServer.ts"
import {
  call,
  internDir,
  type InternServer,
  isAlive,
  runtimeOf,
  startInternServer,
  waitFor
} from "./InternServer.ts"

const slow = { SWITCHYARD_INTERN_STEP_DELAY_MS: "150" }

const create = async (server: InternServer, body: Record<string, unknown>) => {
  const created = await call(server, "POST", "/interns", { body })
  assert.strictEqual(created.status, 201, JSON.stringify(created.body))
  return created.body as Record<string, any>
}

const provision = async (server: InternServer, id: string) => {
  const answer = await call(server, "POST", `/interns/${id}/provision`)
  assert.strictEqual(answer.status, 202, JSON.stringify(answer.body))
  assert.deepStrictEqual(answer.body, { provisioning: true })
}

describe("intern lifecycle over HTTP, process driver", () => {
  let server: InternServer
  beforeAll(async () => {
    server = await startInternServer({ env: slow })
  })
  afterAll(() => server.close())

  it("create → provision → running → PATCH → suspend → provision → running", async () => {
    const created = await create(server, { name: "scout", instructions: "Be brief." })
    assert.strictEqual(created.status, "stopped")
    assert.isNull(created.hostname)
    assert.isNull(created.progress)
    assert.isNull(created.vault_id)
    const id = created.id as string

    await provision(server, id)
    const seen: Array<any> = []
    const running = await waitFor(server, id, (i) => i.status === "running", { seen })
    const steps = seen.filter((i) => i.status === "provisioning" && i.progress !== null).map((i) => i.progress)
    assert.isAbove(steps.length, 0)
    for (const step of steps) {
      if (step.step_number === 0) assert.deepStrictEqual(step, { step_label: "Starting", step_number: 0, total_steps: 0 })
      else assert.strictEqual(step.total_steps, 4)
      assert.isString(step.step_label)
    }
    assert.isTrue(seen.every((i) => (i.progress !== null) === (i.status === "provisioning")), "progress exactly while provisioning")
    assert.isNull(running.progress)
    assert.match(running.hostname, /^scout-[0-9a-f]{8}\.interns\.localhost$/)
    assert.isString(running.vault_id)
    const first = runtimeOf(server, id)!
    assert.isTrue(isAlive(first.pid))
    const health = await fetch(`http://127.0.0.1:${first.port}/health`).then((r) => r.json() as Promise<any>)
    assert.strictEqual(health.intern_id, id)
    assert.strictEqual(health.hostname, running.hostname)

    const patched = await call(server, "PATCH", `/interns/${id}`, {
      body: { name: "scout-2", description: "Finds things", instructions: "New orders.", model: "openai/gpt-4o" }
    })
    assert.strictEqual(patched.status, 200, JSON.stringify(patched.body))
    assert.strictEqual(patched.body.name, "scout-2")
    assert.strictEqual(patched.body.description, "Finds things")
    assert.strictEqual(patched.body.instructions, "New orders.")
    assert.strictEqual(patched.body.model, "openai/gpt-4o")
    assert.strictEqual(patched.body.status, "running")
    assert.strictEqual(patched.body.hostname, running.hostname)

    const cleared = await call(server, "PATCH", `/interns/${id}`, { body: { description: null, model: null } })
    assert.strictEqual(cleared.status, 200)
    assert.isNull(cleared.body.description)
    assert.isNull(cleared.body.model)
    assert.strictEqual(cleared.body.name, "scout-2")
    assert.strictEqual(cleared.body.instructions, "New orders.")

    const suspended = await call(server, "POST", `/interns/${id}/suspend`)
    assert.strictEqual(suspended.status, 200)
    assert.deepStrictEqual(suspended.body, { suspended: true })
    assert.isFalse(isAlive(first.pid))
    assert.isTrue(Fs.existsSync(NodePath.join(internDir(server, id), "workspace", "INSTRUCTIONS.md")))
    assert.isTrue(Fs.existsSync(NodePath.join(internDir(server, id), "vault", "vault.json")))
    const stopped = await call(server, "GET", `/interns/${id}`)
    assert.strictEqual(stopped.body.status, "stopped")
    assert.strictEqual(stopped.body.hostname, running.hostname)

    await provision(server, id)
    const again = await waitFor(server, id, (i) => i.status === "running")
    const second = runtimeOf(server, id)!
    assert.notStrictEqual(second.pid, first.pid)
    assert.isTrue(isAlive(second.pid))
    assert.strictEqual(again.hostname, running.hostname)
    assert.strictEqual(again.vault_id, running.vault_id)
    const dir = internDir(server, id)
    assert.strictEqual(Fs.readFileSync(NodePath.join(dir, "workspace", "INSTRUCTIONS.md"), "utf8"), "New orders.")
    const config = JSON.parse(Fs.readFileSync(NodePath.join(dir, "config.json"), "utf8"))
    assert.strictEqual(config.name, "scout-2")
    assert.isNull(config.model)
  })

  it("refuses suspend and provision while provisioning with intern_busy", async () => {
    const { id } = await create(server, { name: "busy-one" })
    await provision(server, id)
    const busy = await call(server, "POST", `/interns/${id}/suspend`)
    assert.strictEqual(busy.status, 409)
    assert.strictEqual(busy.body.error.code, "intern_busy")
    assert.include(["queued", "provisioning"], busy.body.error.metadata.reason)
    assert.isTrue(busy.body.error.metadata.retryable)
    assert.include(busy.body.error.message, "suspend is allowed when it is")
    const again = await call(server, "POST", `/interns/${id}/provision`)
    assert.strictEqual(again.status, 409)
    assert.strictEqual(again.body.error.code, "intern_busy")
    assert.isFalse(again.body.error.metadata.retryable, "it will be running: provisioning again will not be allowed")

    await waitFor(server, id, (i) => i.status === "running")
    const twice = await call(server, "POST", `/interns/${id}/provision`)
    assert.strictEqual(twice.status, 409)
    assert.deepStrictEqual(twice.body.error.metadata, { reason: "running", retryable: false })
    assert.strictEqual((await call(server, "POST", `/interns/${id}/suspend`)).status, 200)
    assert.strictEqual((await call(server, "POST", `/interns/${id}/suspend`)).status, 200)
  })

  it("marks a crash during provisioning failed, with the process's reason", async () => {
    const { id } = await create(server, { name: "crashy" })
    Fs.mkdirSync(internDir(server, id), { recursive: true })
    Fs.writeFileSync(NodePath.join(internDir(server, id), "vault"), "a file where the vault directory goes")
    await provision(server, id)
    const failed = await waitFor(server, id, (i) => i.status === "failed")
    assert.match(failed.lastFailureMessage, /^Provisioning failed: EEXIST/)
    assert.strictEqual(failed.last_failure_message, failed.lastFailureMessage)
    assert.isNull(failed.progress)

    Fs.rmSync(NodePath.join(internDir(server, id), "vault"))
    await provision(server, id)
    const running = await waitFor(server, id, (i) => i.status === "running")
    assert.isNull(running.lastFailureMessage)
    const suspended = await call(server, "POST", `/interns/${id}/suspend`)
    assert.strictEqual(suspended.status, 200)
  })

  it("deletes: a disk needs acknowledge_workspace_loss, then runtime and disk are gone", async () => {
    const fresh = await create(server, { name: "fleeting" })
    const plain = await call(server, "DELETE", `/interns/${fresh.id}`)
    assert.strictEqual(plain.status, 202)
    assert.deepStrictEqual(plain.body, { deleting: true })

    const { id } = await create(server, { name: "doomed" })
    await provision(server, id)
    const whileProvisioning = await call(server, "DELETE", `/interns/${id}`, { body: { acknowledge_workspace_loss: true } })
    assert.strictEqual(whileProvisioning.status, 409)
    assert.strictEqual(whileProvisioning.body.error.code, "intern_busy")
    await waitFor(server, id, (i) => i.status === "running")
    const pid = runtimeOf(server, id)!.pid

    const unacknowledged = await call(server, "DELETE", `/interns/${id}`, { body: { acknowledge_workspace_loss: false } })
    assert.strictEqual(unacknowledged.status, 400)
    assert.strictEqual(unacknowledged.body.error.code, "invalid_body")
    assert.include(unacknowledged.body.error.message, "acknowledge_workspace_loss")

    const deleted = await call(server, "DELETE", `/interns/${id}`, { body: { acknowledge_workspace_loss: true } })
    assert.strictEqual(deleted.status, 202)
    const deadline = Date.now() + 10_000
    let gone = await call(server, "GET", `/interns/${id}`)
    while (gone.status === 200 && Date.now() < deadline) {
      assert.include(["destroying"], gone.body.status)
      await new Promise((resolve) => setTimeout(resolve, 25))
      gone = await call(server, "GET", `/interns/${id}`)
    }
    assert.strictEqual(gone.status, 404)
    assert.strictEqual(gone.body.error.code, "not_found")
    assert.isFalse(isAlive(pid))
    assert.isFalse(Fs.existsSync(internDir(server, id)))
    assert.strictEqual((await call(server, "GET", `/interns/${fresh.id}`)).status, 404)
  })

  it("follows the process: one killed while running makes the intern failed", async () => {
    const { id } = await create(server, { name: "fragile" })
    await provision(server, id)
    await waitFor(server, id, (i) => i.status === "running")
    process.kill(runtimeOf(server, id)!.pid, "SIGKILL")
    const failed = await waitFor(server, id, (i) => i.status === "failed")
    assert.strictEqual(failed.lastFailureMessage, "The intern runtime stopped unexpectedly (killed by SIGKILL)")
    await provision(server, id)
    await waitFor(server, id, (i) => i.status === "running")
    assert.strictEqual((await call(server, "POST", `/interns/${id}/suspend`)).status, 200)
  })

  it("creates and provisions in one call with provision: true", async () => {
    const created = await create(server, { name: "eager", provision: true })
    assert.include(["queued", "provisioning", "running"], created.status)
    await waitFor(server, created.id, (i) => i.status === "running")
    assert.strictEqual((await call(server, "POST", `/interns/${created.id}/suspend`)).status, 200)
  })
})

describe("gateway restart", () => {
  it("reconciles stored status with the runtime: interns meant to run are running again", async () => {
    const dataDir = tempDir("restart")
    const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
    const options = { dataDir, ...(databaseUrl !== undefined ? { databaseUrl } : {}) }
    const first = await startInternServer(options)
    const keys = { apiKey: first.apiKey, managementKey: first.managementKey }
    let second: InternServer | undefined
    let firstOpen = true
    try {
      const up = await create(first, { name: "keeper" })
      const down = await create(first, { name: "sleeper" })
      await provision(first, up.id)
      await provision(first, down.id)
      await waitFor(first, up.id, (i) => i.status === "running")
      await waitFor(first, down.id, (i) => i.status === "running")
      assert.strictEqual((await call(first, "POST", `/interns/${down.id}/suspend`)).status, 200)
      const before = runtimeOf(first, up.id)!
      const hostname = (await call(first, "GET", `/interns/${up.id}`)).body.hostname
      await first.close()
      firstOpen = false
      assert.isFalse(isAlive(before.pid))

      second = await startInternServer({ ...options, keys })
      const after = await waitFor(second, up.id, (i) => i.status === "running")
      const now = runtimeOf(second, up.id)!
      assert.notStrictEqual(now.pid, before.pid)
      assert.isTrue(isAlive(now.pid))
      assert.strictEqual(after.hostname, hostname)
      const still = await call(second, "GET", `/interns/${down.id}`)
      assert.strictEqual(still.body.status, "stopped")
      assert.isUndefined(runtimeOf(second, down.id))
    } finally {
      if (firstOpen) await first.close()
      await second?.close()
      if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
      Fs.rmSync(dataDir, { recursive: true, force: true })
    }
    // Two gateway starts and three intern processes: on a loaded two-core machine this takes far
    // longer than the default 30 s.
  }, 90_000)
})
