import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

/** The production bundle, built by the global setup (`BuildBundle.ts`). */
const bundle = NodePath.join(import.meta.dirname, "..", "..", "dist", "main.mjs")

/** Node's flags in the start script (`node <flags> dist/main.mjs`), read from package.json. */
const startFlags = (): ReadonlyArray<string> => {
  const pkg = JSON.parse(Fs.readFileSync(NodePath.join(import.meta.dirname, "..", "..", "package.json"), "utf8")) as {
    readonly scripts: { readonly start: string }
  }
  return pkg.scripts.start.trim().split(/\s+/u).filter((word) => word.startsWith("--"))
}

/**
 * The production command: `node <flags> dist/main.mjs`, exactly as the start script runs it, under
 * `node`, with `nodeFlags` for Node (a memory probe) when a test needs them.
 */
export const productionCommand = (node = process.execPath, nodeFlags: ReadonlyArray<string> = []): ReadonlyArray<string> => [
  node,
  ...startFlags(),
  ...nodeFlags,
  bundle
]

export interface BundleProcess {
  readonly child: ChildProcess.ChildProcess
  readonly stdout: () => string
  readonly stderr: () => string
  readonly exited: Promise<{ readonly code: number | null; readonly signal: NodeJS.Signals | null }>
  readonly isRunning: () => boolean
  readonly stop: () => Promise<void>
}

/**
 * This process's environment but the AWS credential chain's container route, which a test file of
 * this worker may have pointed at its fake (`FakeBedrock.pointCredentialChainAt`): files share a
 * worker's process, and a gateway started by a later file would find Bedrock's credentials and
 * turn the provider on. A test that wants the route passes it in `env`.
 */
const inherited = (): NodeJS.ProcessEnv =>
  Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("AWS_CONTAINER_")))

/**
 * Runs the production command (optionally under `prefix`, e.g. `unshare ...`, with `args`, a
 * server command such as `mint-management-key`, and `nodeFlags` for Node) with the given
 * environment on top of this process's.
 */
export const launch = (
  env: Record<string, string>,
  prefix: ReadonlyArray<string> = [],
  options: { readonly args?: ReadonlyArray<string>; readonly nodeFlags?: ReadonlyArray<string> } = {}
): BundleProcess => {
  const [command, ...args] = [...prefix, ...productionCommand(process.execPath, options.nodeFlags), ...(options.args ?? [])]
  const child = ChildProcess.spawn(command!, args, { env: { ...inherited(), ...env }, stdio: ["ignore", "pipe", "pipe"] })
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
