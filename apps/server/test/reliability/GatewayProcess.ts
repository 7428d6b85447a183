import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { freePort } from "../support/ServerProcess.ts"
import { tempDir } from "../support/TestServer.ts"
import { sleep } from "./Reliability.ts"

export interface Memory {
  readonly sequence: number
  readonly rss: number
  readonly heapUsed: number
  readonly heapTotal: number
  readonly external: number
  readonly arrayBuffers: number
}

export interface GatewayProcess {
  readonly pid: number
  readonly origin: string
  readonly baseUrl: string
  readonly output: () => string
  readonly isRunning: () => boolean
  /** Heap and RSS after two full garbage collections in the gateway. */
  readonly memory: () => Promise<Memory>
  readonly kill: (signal: NodeJS.Signals) => Promise<void>
  readonly stop: () => Promise<void>
}

const main = NodePath.join(import.meta.dirname, "..", "..", "src", "main.ts")
const probe = NodePath.join(import.meta.dirname, "fixtures", "MemoryProbe.ts")

/** The Node flags that preload the memory probe (`MemoryProbe.ts`); its file is `SWITCHYARD_TEST_MEMORY_FILE`. */
export const memoryProbeFlags: ReadonlyArray<string> = ["--expose-gc", "--import", probe]

/**
 * Asks a gateway process running the memory probe for its memory (`signal` sends it SIGUSR2) and
 * reads the answer from `memoryFile`: after two full collections, or `plain` (what the process
 * holds at that moment, garbage V8 has not collected yet included; no collection is forced).
 */
export const memoryReader = (signal: () => void, memoryFile: string, output: () => string) => {
  let lastSequence = 0
  return async (reading: "collected" | "plain" = "collected"): Promise<Memory> => {
    Fs.writeFileSync(`${memoryFile}.request`, reading)
    signal()
    const deadline = Date.now() + 10_000
    while (Date.now() < deadline) {
      if (Fs.existsSync(memoryFile)) {
        const read = JSON.parse(Fs.readFileSync(memoryFile, "utf8")) as Memory
        if (read.sequence > lastSequence) {
          lastSequence = read.sequence
          return read
        }
      }
      await sleep(25)
    }
    throw new Error(`the gateway did not report its memory:\n${output().slice(-4000)}`)
  }
}

/**
 * `src/main.ts` in its own Node process, as `pnpm start` runs it, with a memory probe preloaded;
 * resolves once its health endpoint answers.
 */
export const startGatewayProcess = async (env: Record<string, string>, timeoutMs = 60_000): Promise<GatewayProcess> => {
  const port = await freePort()
  const memoryFile = NodePath.join(tempDir("memory"), "memory.json")
  const child = ChildProcess.spawn(process.execPath, [...memoryProbeFlags, main], {
    env: {
      ...process.env,
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_TEST_MEMORY_FILE: memoryFile,
      ...env
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  child.stdout.on("data", (chunk) => (output += String(chunk)))
  child.stderr.on("data", (chunk) => (output += String(chunk)))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const isRunning = () => child.exitCode === null && child.signalCode === null
  const origin = `http://127.0.0.1:${port}`
  const kill = async (signal: NodeJS.Signals) => {
    if (isRunning()) {
      child.kill(signal)
      await exited
    }
  }
  const stop = async () => {
    if (!isRunning()) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    await exited
    clearTimeout(timer)
  }
  const memory = memoryReader(() => child.kill("SIGUSR2"), memoryFile, () => output)
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (!isRunning()) throw new Error(`the gateway exited with ${child.exitCode ?? child.signalCode}:\n${output}`)
    // Its own answer: another test's server may hold the port this one was given (freePort is a
    // guess), so the probe counts only once this process says it listens there.
    const listening = output.includes(`listening on ${origin}/`)
    const healthy = listening && await fetch(`${origin}/api/v1/health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false)
    if (healthy) {
      return { pid: child.pid!, origin, baseUrl: `${origin}/api/v1`, output: () => output, isRunning, memory, kill, stop }
    }
    await sleep(100)
  }
  await kill("SIGKILL")
  throw new Error(`the gateway did not become healthy within ${timeoutMs} ms:\n${output}`)
}

/** A data directory for a gateway process: the embedded store is created in it at the first start. */
export const dataDirWithStore = (): string => tempDir("gateway")
