import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as NodePath from "node:path"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import { dataDirWithStore } from "../reliability/GatewayProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import { tempDir } from "../support/TestServer.ts"
import { healthy, launch } from "../support/BundleProcess.ts"

/** An OpenAI-compatible upstream that holds each answer until `release()`. */
const heldUpstream = async () => {
  let arrived!: () => void
  const arrival = new Promise<void>((resolve) => (arrived = resolve))
  let release!: () => void
  const released = new Promise<void>((resolve) => (release = resolve))
  const server = Http.createServer((request, response) => {
    request.resume()
    request.once("end", () => {
      arrived()
      void released.then(() => {
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({
          object: "list",
          data: [{ object: "embedding", index: 0, embedding: Array.from({ length: 16 }, (_, i) => (i + 1) / 100) }],
          model: "embed",
          usage: { prompt_tokens: 1, total_tokens: 1 }
        }))
      })
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as Net.AddressInfo).port}/v1`,
    arrival,
    release,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** The host pid of the process `unshare --fork` started: PID 1 of the new namespace. */
const namespaceInit = async (unsharePid: number): Promise<number> => {
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    const children = Fs.readdirSync(`/proc/${unsharePid}/task`).flatMap((task) =>
      Fs.readFileSync(`/proc/${unsharePid}/task/${task}/children`, "utf8").trim().split(/\s+/u).filter((p) => p !== "")
    )
    if (children.length > 0) return Number(children[0])
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error("unshare started no child")
}

const canUnshare = (() => {
  const probe = ChildProcess.spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"])
  return probe.status === 0
})()

describe.skipIf(!canUnshare)("stopping the production command as PID 1 of its own PID namespace (as in a container)", () => {
  it("SIGTERM while a request is in flight: a line counts it, the request finishes with 200, new connections are refused, a line says the stop ended, exit code 0", async () => {
    const upstream = await heldUpstream()
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0" } })])]
    }))
    const apiKey = `sk-sy-v1-${"1".repeat(64)}`
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const gateway = launch({
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_DATA_DIR: dataDirWithStore(),
      DATABASE_URL: "",
      SWITCHYARD_CONFIG: configPath,
      ALPHA_API_KEY: "sk-fake",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey
    }, ["unshare", "--pid", "--fork", "--mount-proc"])
    try {
      await healthy(gateway, origin)
      const init = await namespaceInit(gateway.child.pid!)
      // It is the node process itself (no shell, no package manager), and PID 1 inside.
      assert.include(Fs.readFileSync(`/proc/${init}/cmdline`, "utf8"), "dist/main.mjs")
      const nsPid = Fs.readFileSync(`/proc/${init}/status`, "utf8").match(/^NSpid:\s+(.*)$/mu)![1]!.trim().split(/\s+/u)
      assert.strictEqual(nsPid.at(-1), "1")

      const inFlight = fetch(`${origin}/api/v1/embeddings`, {
        method: "POST",
        headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "acme/embed", input: "hello" })
      }).then(async (r) => ({ status: r.status, body: await r.json() as any }))
      await upstream.arrival
      process.kill(init, "SIGTERM")
      // The gateway takes the signal on its own event loop: a connection made before it did would
      // be one more request in flight. Asked once its line says the stop began.
      for (const deadline = Date.now() + 10_000; !gateway.stdout().includes("Switchyard is shutting down") && Date.now() < deadline;) {
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      // The answer is held until the signal was sent; the server must still deliver it. Meanwhile
      // it stops taking connections: asked, each time on a new connection, until it refuses one
      // (or 10 s have passed). A pooled keep-alive connection would be one the server accepted
      // before the signal, which it may still serve.
      const ask = () =>
        new Promise<string>((resolve) => {
          const request = Http.get(`${origin}/api/v1/health`, { agent: false, timeout: 10_000 }, (response) => {
            response.resume()
            resolve("answered")
          })
          request.once("timeout", () => request.destroy(new Error("timeout")))
          request.once("error", (e: Error & { code?: string }) => resolve(e.code ?? e.message))
        })
      const deadline = Date.now() + 10_000
      let refused = await ask()
      while (refused !== "ECONNREFUSED" && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 25))
        refused = await ask()
      }
      upstream.release()
      const reply = await inFlight
      assert.strictEqual(reply.status, 200, JSON.stringify(reply.body))
      assert.strictEqual(reply.body.data[0].embedding.length, 16)
      assert.strictEqual(refused, "ECONNREFUSED")
      const exit = await gateway.exited
      assert.deepStrictEqual(exit, { code: 0, signal: null }, gateway.stderr())
      // One line when the shutdown began, counting the held request; one when it ended, last.
      const messages = gateway.stdout().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line).message as string)
      assert.include(
        messages,
        "Switchyard is shutting down (SIGTERM): 1 request in flight, which may finish; new connections are refused and kept-alive ones close after their answer",
        `the gateway's log lines: ${JSON.stringify(messages)}`
      )
      assert.match(messages.at(-1)!, /^Switchyard stopped: shutdown took \d+\.\d s$/u)
    } finally {
      upstream.release()
      await gateway.stop()
      await upstream.close()
    }
  }, 360_000)
})
