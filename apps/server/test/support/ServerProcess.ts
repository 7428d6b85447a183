import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as NodePath from "node:path"

export interface ServerProcess {
  readonly baseUrl: string
  /** The process id of `src/main.ts` (with `SWITCHYARD_WORKERS`, the primary's). */
  readonly pid: number
  readonly output: () => string
  /** Standard output alone (the log). */
  readonly stdout: () => string
  readonly stop: () => Promise<void>
}

const main = NodePath.join(import.meta.dirname, "..", "..", "src", "main.ts")

export const freePort = () =>
  new Promise<number>((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

/**
 * Runs `src/main.ts` as a separate Node process (what `pnpm start` runs) and waits until its
 * health endpoint answers; fails with the process's output if it exits or stays silent first. It
 * listens on a free port, or on `env.SWITCHYARD_PORT` when given (a test that must know the
 * gateway's URL before it starts, as an identity provider's redirect URI does).
 */
export const startServerProcess = async (env: Record<string, string>, timeoutMs = 60_000): Promise<ServerProcess> => {
  const port = env.SWITCHYARD_PORT === undefined ? await freePort() : Number(env.SWITCHYARD_PORT)
  const child = ChildProcess.spawn(process.execPath, [main], {
    env: { ...process.env, SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_PORT: String(port), ...env },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let output = ""
  let stdout = ""
  child.stdout.on("data", (chunk) => {
    output += String(chunk)
    stdout += String(chunk)
  })
  child.stderr.on("data", (chunk) => (output += String(chunk)))
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()))
  const baseUrl = `http://127.0.0.1:${port}/api/v1`
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 10_000)
      await exited
      clearTimeout(timer)
    }
  }
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the server process exited with ${child.exitCode}:\n${output}`)
    const healthy = await fetch(`${baseUrl}/health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.ok, () => false)
    if (healthy) return { baseUrl, pid: child.pid!, output: () => output, stdout: () => stdout, stop }
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
  await stop()
  throw new Error(`the server process did not become healthy within ${timeoutMs} ms:\n${output}`)
}

/** The processes whose parent is `pid` (Linux's /proc). */
export const childrenOf = (pid: number): Array<number> =>
  Fs.readdirSync("/proc").filter((name) => /^\d+$/u.test(name)).flatMap((name) => {
    try {
      const stat = Fs.readFileSync(`/proc/${name}/stat`, "utf8")
      // The parent id is the second field after the command, which is in parentheses.
      const parent = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1])
      return parent === pid ? [Number(name)] : []
    } catch {
      return []
    }
  })
