import * as ChildProcess from "node:child_process"
import * as NodePath from "node:path"

/** The production bundle, built by the global setup (`BuildBundle.ts`). */
const bundle = NodePath.join(import.meta.dirname, "..", "..", "dist", "main.mjs")

/** The production command: `node <flags> dist/main.mjs`, exactly as the start script runs it. */
const productionCommand = (): ReadonlyArray<string> => [process.execPath, "--max-semi-space-size=8", "--v8-pool-size=1", bundle]

export interface BundleProcess {
  readonly child: ChildProcess.ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly isRunning: () => boolean
  readonly stop: () => Promise<void>
}

/**
 * Runs the production command (optionally under `prefix`, e.g. `unshare ...`) with the given
 * environment on top of this process's.
 */
export const launch = (env: Record<string, string>, prefix: ReadonlyArray<string> = []): BundleProcess => {
  const [command, ...args] = [...prefix, ...productionCommand()]
  const child = ChildProcess.spawn(command!, args, { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] })
  let stdout = ""
  let stderr = ""
  child.stdout!.on("data", (chunk) => (stdout += String(chunk)))
  child.stderr!.on("data", (chunk) => (stderr += String(chunk)))
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => resolve({ code, signal }))
  )
  const isRunning = () => child.exitCode === null && child.signalCode === null
  const stop = async () => {
    if (!isRunning()) return
    child.kill("SIGTERM")
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
    await exited
    clearTimeout(timer)
  }
  return { child, stdout: () => stdout, stderr: () => stderr, exited, isRunning, stop }
}

/** Resolves once `GET /api/v1/health` answers 200; fails if the process exits first or `timeoutMs` passes. */
export const healthy = async (process: BundleProcess, origin: string, timeoutMs = 240_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (!process.isRunning()) throw new Error(`the gateway exited:\n${process.stdout()}\n${process.stderr()}`)
    const ok = await fetch(`${origin}/api/v1/health`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.ok, () => false)
    if (ok) return
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`the gateway did not become healthy within ${timeoutMs} ms:\n${process.stdout()}\n${process.stderr()}`)
}
