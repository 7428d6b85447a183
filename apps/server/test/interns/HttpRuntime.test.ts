import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { call, type InternServer, startInternServer, waitFor } from "./InternServer.ts"

interface Run {
  state: "stopped" | "starting" | "running" | "failed"
  run_id: string | null
  progress: { step_label: string; step_number: number; total_steps: number } | null
  message: string | null
  hostname: string
}

/**
 * An orchestrator that speaks the `http` driver's protocol and runs nothing: each start goes
 * through two steps and is running after them, or fails when the intern is named `doomed`.
 */
const orchestrator = async () => {
  const runs = new Map<string, Run>()
  const calls: Array<string> = []
  let hang = false
  const server = Http.createServer((request, response) => {
    let text = ""
    request.on("data", (chunk) => {
      text += chunk
    })
    request.on("end", () => {
      calls.push(`${request.method} ${request.url}`)
      if (hang) return
      const [, , id, action] = (request.url ?? "").split("/")
      const reply = (status: number, body?: unknown) => {
        response.writeHead(status, { "content-type": "application/json" })
        response.end(body === undefined ? "" : JSON.stringify(body))
      }
      const run = runs.get(id!)
      if (request.method === "POST" && action === "start") {
        const spec = JSON.parse(text)
        const next: Run = {
          state: "starting",
          run_id: spec.run_id,
          progress: { step_label: "Scheduling", step_number: 1, total_steps: 2 },
          message: null,
          hostname: spec.hostname ?? `${spec.name}.orchestrated.test`
        }
        runs.set(id!, next)
        setTimeout(() => {
          next.progress = { step_label: "Booting", step_number: 2, total_steps: 2 }
        }, 100)
        setTimeout(() => {
          if (spec.name === "doomed") Object.assign(next, { state: "failed", progress: null, message: "image pull failed" })
          else Object.assign(next, { state: "running", progress: null })
        }, 250)
        return reply(202, { hostname: next.hostname })
      }
      if (request.method === "POST" && action === "stop") {
        if (run) Object.assign(run, { state: "stopped", progress: null })
        return reply(200, {})
      }
      if (request.method === "DELETE") {
        runs.delete(id!)
        return reply(204)
      }
      if (request.method === "GET") {
        return run === undefined ? reply(404, {}) : reply(200, {
          state: run.state,
          run_id: run.run_id,
          progress: run.progress,
          message: run.message
        })
      }
      reply(400, {})
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    runs,
    calls,
    hang: (value: boolean) => {
      hang = value
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}

describe("intern lifecycle over HTTP, http driver", () => {
  let fake: Awaited<ReturnType<typeof orchestrator>>
  let server: InternServer
  beforeAll(async () => {
    fake = await orchestrator()
    server = await startInternServer({
      env: {
        SWITCHYARD_INTERN_RUNTIME: "http",
        SWITCHYARD_INTERN_ORCHESTRATOR_URL: fake.url,
        SWITCHYARD_INTERN_ORCHESTRATOR_POLL_MS: "30",
        SWITCHYARD_INTERN_ORCHESTRATOR_TIMEOUT_MS: "400"
      }
    })
  })
  afterAll(async () => {
    await server.close()
    await fake.close()
  })

  it("provisions through the orchestrator, follows its steps, suspends and provisions again", async () => {
    const { id } = (await call(server, "POST", "/interns", { body: { name: "remote", instructions: "Hi" } })).body
    assert.strictEqual((await call(server, "POST", `/interns/${id}/provision`)).status, 202)
    const seen: Array<any> = []
    const running = await waitFor(server, id, (i) => i.status === "running", { seen })
    assert.strictEqual(running.hostname, "remote.orchestrated.test")
    assert.isTrue(seen.some((i) => i.status === "provisioning" && i.progress?.total_steps === 2))
    assert.strictEqual(fake.runs.get(id)!.run_id !== null, true)

    const suspended = await call(server, "POST", `/interns/${id}/suspend`)
    assert.deepStrictEqual(suspended.body, { suspended: true })
    assert.strictEqual(fake.runs.get(id)!.state, "stopped")
    assert.strictEqual((await call(server, "GET", `/interns/${id}`)).body.status, "stopped")

    assert.strictEqual((await call(server, "POST", `/interns/${id}/provision`)).status, 202)
    await waitFor(server, id, (i) => i.status === "running")
    assert.isTrue(fake.calls.filter((c) => c === `POST /interns/${id}/start`).length === 2)
  })

  it("marks a run the orchestrator reports failed as failed, with its message", async () => {
    const { id } = (await call(server, "POST", "/interns", { body: { name: "doomed" } })).body
    await call(server, "POST", `/interns/${id}/provision`)
    const failed = await waitFor(server, id, (i) => i.status === "failed")
    assert.strictEqual(failed.lastFailureMessage, "image pull failed")
  })

  it("answers upstream_unavailable, retryable, when the orchestrator does not answer in time or at all", async () => {
    const { id } = (await call(server, "POST", "/interns", { body: { name: "stranded" } })).body
    await call(server, "POST", `/interns/${id}/provision`)
    await waitFor(server, id, (i) => i.status === "running")

    fake.hang(true)
    const started = Date.now()
    const slow = await call(server, "POST", `/interns/${id}/suspend`)
    assert.strictEqual(slow.status, 502)
    assert.strictEqual(slow.body.error.code, "upstream_unavailable")
    assert.deepStrictEqual(slow.body.error.metadata, { reason: "runtime_unavailable", retryable: true })
    assert.isBelow(Date.now() - started, 5_000)
    assert.strictEqual((await call(server, "GET", `/interns/${id}`)).body.status, "running")

    await fake.close()
    const down = await call(server, "POST", `/interns/${id}/suspend`)
    assert.strictEqual(down.status, 502)
    assert.strictEqual(down.body.error.code, "upstream_unavailable")
    assert.include(down.body.error.message, "may be retried")
    assert.strictEqual((await call(server, "GET", `/interns/${id}`)).body.status, "running")

    const idle = (await call(server, "POST", "/interns", { body: { name: "idle" } })).body
    const provision = await call(server, "POST", `/interns/${idle.id}/provision`)
    assert.strictEqual(provision.status, 502)
    assert.strictEqual(provision.body.error.code, "upstream_unavailable")
    const after = (await call(server, "GET", `/interns/${idle.id}`)).body
    assert.strictEqual(after.status, "failed")
    assert.include(after.lastFailureMessage, "orchestrator could not be reached")
  })
})
