/**
 * The program of one intern under the `process` driver, run as `node InternProcess.ts <dir>` with
 * an IPC channel. It receives its configuration over IPC, prepares its disk in `<dir>`, reports
 * each provisioning step, serves `GET /health` on 127.0.0.1 and stops on SIGTERM, SIGINT or when
 * the gateway goes away. It needs nothing but Node's standard library.
 */
import * as Fs from "node:fs/promises"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"

interface InternConfig {
  readonly internId: string
  readonly runId: string
  readonly workspaceId: string
  readonly name: string
  readonly hostname: string
  readonly instructions: string | null
  readonly model: string | null
  readonly vaultId: string
  readonly attachedVaultId: string | null
  readonly stepDelayMs: number
}

type ToGateway =
  | { readonly type: "progress"; readonly step_label: string; readonly step_number: number; readonly total_steps: number }
  | { readonly type: "ready"; readonly port: number }
  | { readonly type: "error"; readonly message: string }

const dir = process.argv[2]
const startedAt = new Date()
let server: Http.Server | undefined
let stopping = false

const send = (message: ToGateway) =>
  new Promise<void>((resolve) => {
    if (process.send === undefined || !process.connected) return resolve()
    process.send(message, () => resolve())
  })

const pause = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const log = (line: string) =>
  dir === undefined
    ? Promise.resolve()
    : Fs.appendFile(Path.join(dir, "logs", "intern.log"), `${new Date().toISOString()} ${line}\n`).catch(() => undefined)

const steps: ReadonlyArray<{ readonly label: string; readonly run: (config: InternConfig) => Promise<void> }> = [
  {
    label: "Preparing disk",
    run: async () => {
      await Fs.mkdir(Path.join(dir!, "workspace"), { recursive: true })
      await Fs.mkdir(Path.join(dir!, "logs"), { recursive: true })
    }
  },
  {
    label: "Opening vault",
    run: async (config) => {
      await Fs.mkdir(Path.join(dir!, "vault"), { recursive: true })
      await Fs.writeFile(
        Path.join(dir!, "vault", "vault.json"),
        JSON.stringify({ vault_id: config.vaultId, attached_vault_id: config.attachedVaultId }, null, 2)
      )
    }
  },
  {
    label: "Loading configuration",
    run: async (config) => {
      const { stepDelayMs: _, ...settings } = config
      await Fs.writeFile(Path.join(dir!, "config.json"), JSON.stringify(settings, null, 2))
      const instructions = Path.join(dir!, "workspace", "INSTRUCTIONS.md")
      if (config.instructions === null) await Fs.rm(instructions, { force: true })
      else await Fs.writeFile(instructions, config.instructions)
    }
  },
  {
    label: "Starting runtime",
    run: (config) =>
      new Promise<void>((resolve, reject) => {
        const s = Http.createServer((request, response) => {
          const body = request.url === "/health"
            ? {
              status: "ok",
              intern_id: config.internId,
              run_id: config.runId,
              hostname: config.hostname,
              model: config.model,
              uptime_ms: Date.now() - startedAt.getTime()
            }
            : undefined
          response.writeHead(body === undefined ? 404 : 200, { "content-type": "application/json" })
          response.end(JSON.stringify(body ?? { error: "not found" }))
        })
        s.once("error", reject)
        s.listen(0, "127.0.0.1", () => {
          server = s
          resolve()
        })
      })
  }
]

const provision = async (config: InternConfig) => {
  await Fs.mkdir(dir!, { recursive: true })
  for (let i = 0; i < steps.length; i++) {
    const step = steps[i]!
    await send({ type: "progress", step_label: step.label, step_number: i + 1, total_steps: steps.length })
    if (config.stepDelayMs > 0) await pause(config.stepDelayMs)
    await step.run(config)
  }
  const port = (server!.address() as AddressInfo).port
  await Fs.writeFile(
    Path.join(dir!, "runtime.json"),
    JSON.stringify({ pid: process.pid, port, run_id: config.runId, hostname: config.hostname, started_at: startedAt.toISOString() })
  )
  await log(`run ${config.runId} ready on 127.0.0.1:${port} as ${config.hostname}`)
  await send({ type: "ready", port })
}

const stop = async (why: string) => {
  if (stopping) return
  stopping = true
  await log(`stopping: ${why}`)
  if (dir !== undefined) await Fs.rm(Path.join(dir, "runtime.json"), { force: true }).catch(() => undefined)
  server?.close()
  server?.closeAllConnections()
  process.exit(0)
}

const fail = async (error: unknown) => {
  const message = error instanceof Error ? error.message : String(error)
  process.stderr.write(`${message}\n`)
  await send({ type: "error", message })
  process.exit(1)
}

process.on("SIGTERM", () => void stop("SIGTERM"))
process.on("SIGINT", () => void stop("SIGINT"))
process.on("disconnect", () => void stop("gateway disconnected"))

if (dir === undefined || process.send === undefined) {
  process.stderr.write("usage: node InternProcess.ts <data-dir> (with an IPC channel)\n")
  process.exit(2)
}

process.once("message", (message: { readonly type: string; readonly config: InternConfig }) => {
  if (message.type !== "configure") return void fail(new Error(`unexpected message ${message.type}`))
  provision(message.config).catch(fail)
})
