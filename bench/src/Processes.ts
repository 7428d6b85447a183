import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import * as PeerInstall from "./PeerInstall.ts"

/**
 * The processes a benchmark runs: each is a Node child with its output in a log file, known to be
 * ready when it answers HTTP, and stopped with SIGTERM (SIGKILL if it has not exited in time).
 */
export const repoRoot = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "..")

const serveScript = NodePath.join(repoRoot, "bench", "src", "serve.ts")
const serverDir = NodePath.join(repoRoot, "apps", "server")
let bundle: string | undefined

/**
 * The server as `pnpm start` runs it: its production bundle (`dist/main.mjs`), built here with the
 * server's own rolldown config into a folder of the bench's (under the server's
 * `node_modules/.cache`, where its dependencies resolve), so that a build of `dist/` running at
 * the same time, as the server's tests do, is neither disturbed nor disturbing.
 */
export const switchyardBundle = (): string => {
  if (bundle !== undefined) return bundle
  const out = NodePath.join(serverDir, "node_modules", ".cache", "switchyard-bench", "dist")
  const cli = NodePath.join(serverDir, "node_modules", "rolldown", "bin", "cli.mjs")
  const built = spawnSync(process.execPath, [cli, "-c", "rolldown.config.ts", "-d", out], { cwd: serverDir, encoding: "utf8" })
  if (built.status !== 0) throw new Error(`building the server's bundle failed:\n${built.stdout}${built.stderr}`)
  bundle = NodePath.join(out, "main.mjs")
  return bundle
}

/**
 * The Node flags of the `start` script (`node <flags> dist/main.mjs`) of the server package in
 * `dir`, so that the bench runs Switchyard exactly as `pnpm start` does.
 */
export const startFlagsOf = (dir: string): ReadonlyArray<string> => {
  const pkg = JSON.parse(Fs.readFileSync(NodePath.join(dir, "package.json"), "utf8")) as {
    readonly scripts: { readonly start: string }
  }
  const words = pkg.scripts.start.trim().split(/\s+/u)
  // What follows `node` (a `trap '' INT && ` before it is the shell's).
  return words.slice(words.indexOf("node") + 1).filter((word) => word.startsWith("--"))
}

/** The environment the start script sets before `node` (`MALLOC_ARENA_MAX=1 node …`). */
export const startEnvOf = (dir: string): Readonly<Record<string, string>> => {
  const pkg = JSON.parse(Fs.readFileSync(NodePath.join(dir, "package.json"), "utf8")) as {
    readonly scripts: { readonly start: string }
  }
  const words = pkg.scripts.start.trim().split(/\s+/u)
  return Object.fromEntries(
    words.slice(0, words.indexOf("node")).flatMap((word) => {
      const match = /^([A-Z_][A-Z0-9_]*)=(.*)$/u.exec(word)
      return match === null ? [] : [[match[1]!, match[2]!]]
    })
  )
}

const switchyardStartFlags = (): ReadonlyArray<string> => startFlagsOf(serverDir)

const living = new Set<ChildProcess>()

// Whatever ends the harness (an exception, process.exit), no benchmark process outlives it.
process.on("exit", () => {
  for (const child of living) child.kill("SIGKILL")
})

export interface Child {
  readonly name: string
  readonly pid: number
  readonly port: number
  readonly logPath: string
  readonly exited: () => boolean
  readonly stop: () => Promise<void>
}

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = Net.createServer()
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as Net.AddressInfo
      server.close(() => resolve(port))
    })
  })

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const logTail = (path: string, bytes = 4000): string => {
  try {
    const text = Fs.readFileSync(path, "utf8")
    return text.slice(-bytes)
  } catch {
    return ""
  }
}

const spawnNode = (options: {
  readonly name: string
  readonly port: number
  readonly args: ReadonlyArray<string>
  readonly env: NodeJS.ProcessEnv
  readonly logDir: string
  /** A cgroup's `cgroup.procs`: the process joins that cgroup before Node starts (a container's limit). */
  readonly cgroupProcs?: string
}): Child => {
  Fs.mkdirSync(options.logDir, { recursive: true })
  const logPath = NodePath.join(options.logDir, `${options.name}.log`)
  const log = Fs.openSync(logPath, "a")
  // In a cgroup: a shell writes its own pid into the cgroup, then becomes Node (same pid).
  const [command, args] = options.cgroupProcs === undefined
    ? [process.execPath, [...options.args]]
    : ["/bin/sh", ["-c", `echo $$ > "$0" && exec "$@"`, options.cgroupProcs, process.execPath, ...options.args]]
  const child: ChildProcess = spawn(command, args, {
    cwd: repoRoot,
    env: options.env,
    stdio: ["ignore", log, log]
  })
  Fs.closeSync(log)
  let done = child.exitCode !== null
  living.add(child)
  const exit = new Promise<void>((resolve) => {
    child.once("exit", () => {
      done = true
      living.delete(child)
      resolve()
    })
  })
  if (child.pid === undefined) throw new Error(`${options.name} did not start: ${logTail(logPath)}`)
  return {
    name: options.name,
    pid: child.pid,
    port: options.port,
    logPath,
    exited: () => done,
    stop: async () => {
      if (done) return
      child.kill("SIGTERM")
      const timer = setTimeout(() => child.kill("SIGKILL"), 30_000)
      await exit
      clearTimeout(timer)
    }
  }
}

/**
 * Waits, at most `timeoutMs`, until `probe` succeeds; fails early when the child has exited.
 */
const waitReady = async (child: Child, probe: () => Promise<boolean>, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (Date.now() < deadline) {
    if (child.exited()) throw new Error(`${child.name} exited while starting:\n${logTail(child.logPath)}`)
    const ok = await probe().catch(() => false)
    if (ok) return
    await sleep(100)
  }
  throw new Error(`${child.name} was not ready within ${timeoutMs} ms:\n${logTail(child.logPath)}`)
}

const answers = (url: string, init?: RequestInit) => async () => {
  const response = await fetch(url, { ...init, signal: AbortSignal.timeout(2_000) })
  await response.arrayBuffer()
  return true
}

const baseEnv = (): NodeJS.ProcessEnv => {
  const env = { ...process.env }
  delete env.NODE_OPTIONS
  return env
}

export const upstreamApiKey = "sk-bench-upstream"

export const startUpstream = async (logDir: string, options: {
  readonly width: number
  readonly delays: Readonly<Record<string, number>>
  readonly maxInputs: number
}) => {
  const port = await freePort()
  const child = spawnNode({
    name: "upstream",
    port,
    args: [serveScript, "upstream", JSON.stringify({ ...options, apiKey: upstreamApiKey, port })],
    env: baseEnv(),
    logDir
  })
  await waitReady(child, answers(`http://127.0.0.1:${port}/`), 30_000)
  return child
}

/** The bearer token the Effect floor accepts. */
export const effectFloorApiKey = "sk-bench-effect-floor"

/**
 * The minimal Effect 4 gateway (EffectFloor.ts), started with the same Node flags as Switchyard's
 * production command, so its CPU per request is the floor of Switchyard's own stack.
 */
export const startEffectFloor = async (logDir: string, upstreamPort: number) => {
  const port = await freePort()
  const options = {
    upstreamPort,
    upstreamApiKey,
    apiKey: effectFloorApiKey,
    models: { [benchModels.priced]: upstreamModels.fast, [benchModels.slow]: upstreamModels.slow },
    promptPrice: "0.02",
    port
  }
  const child = spawnNode({
    name: "effect-floor",
    port,
    args: [...switchyardStartFlags(), serveScript, "effect-floor", JSON.stringify(options)],
    env: baseEnv(),
    logDir
  })
  await waitReady(child, answers(`http://127.0.0.1:${port}/`), 30_000)
  return child
}

export const startFloor = async (logDir: string, upstreamPort: number) => {
  const port = await freePort()
  const child = spawnNode({
    name: "floor",
    port,
    args: [serveScript, "floor", JSON.stringify({ upstreamPort, port })],
    env: baseEnv(),
    logDir
  })
  await waitReady(child, answers(`http://127.0.0.1:${port}/`), 30_000)
  return child
}

export const startPeer = async (logDir: string) => {
  const entry = await PeerInstall.ensure()
  const port = await freePort()
  const child = spawnNode({
    name: "peer",
    port,
    args: [serveScript, "peer", JSON.stringify({ port, entry })],
    env: { ...baseEnv(), NODE_ENV: "production" },
    logDir
  })
  await waitReady(child, answers(`http://127.0.0.1:${port}/`), 60_000)
  return child
}

export const benchModels = {
  priced: "bench/text-embedding-3-small",
  free: "bench/text-embedding-3-small-free",
  slow: "bench/text-embedding-3-small-slow",
  /** Matryoshka, at an endpoint that takes no `dimensions`: the gateway cuts its vectors (issue 60). */
  nested: "bench/text-embedding-3-small-nested"
} as const

export const upstreamModels = {
  fast: "text-embedding-3-small",
  slow: "text-embedding-3-small-slow"
} as const

/**
 * The config file of a benchmarked gateway: one OpenAI-compatible provider at the fake upstream,
 * serving the same model at a list price, at no price, and slowly; the workspace's embeddings
 * cache is on (the targets that must go upstream bypass it per request).
 */
const switchyardConfig = (upstreamPort: number, width: number, cache: boolean, maxBatchItems: number, nested: boolean) => {
  const endpoint = (model: string, upstreamModel: string, prompt: string) => ({
    model,
    upstream_model: upstreamModel,
    pricing: { prompt, request: "0", image: "0", audio: "0" },
    quantization: "fp32",
    dimensions: width,
    supported_parameters: ["dimensions", "encoding_format", "input_type", "user"],
    max_batch_items: maxBatchItems
  })
  return {
    providers: [{
      slug: "bench-upstream",
      name: "Benchmark upstream",
      adapter: "openai",
      base_url: `http://127.0.0.1:${upstreamPort}/v1`,
      api_key_env: "BENCH_UPSTREAM_API_KEY",
      data_collection: "deny",
      zdr: true,
      endpoints: [
        endpoint(benchModels.priced, upstreamModels.fast, "0.02"),
        endpoint(benchModels.free, upstreamModels.fast, "0"),
        endpoint(benchModels.slow, upstreamModels.slow, "0.02"),
        // Another build's config schema may not know `matryoshka` (it refuses unknown fields).
        ...(nested ? [{ ...endpoint(benchModels.nested, upstreamModels.fast, "0.02"), supported_parameters: ["encoding_format", "input_type", "user"], matryoshka: true }] : [])
      ]
    }],
    workspaces: { default: { cache } }
  }
}

export interface Switchyard extends Child {
  readonly apiKey: string
  readonly managementKey: string
  readonly store: "sqlite" | "postgres"
  /** Its API base URL (`http://127.0.0.1:<port>/api/v1`). */
  readonly base: string
  /** Gives the workspace its credits (done at start unless `fundLater`). */
  readonly fund: () => Promise<void>
}

const newSecret = () => `sk-sy-v1-${Crypto.randomBytes(32).toString("hex")}`

/**
 * Switchyard as an operator runs it (`pnpm start`: node with the start script's flags on the
 * production bundle), on the embedded store in a
 * fresh data directory, or on the PostgreSQL database given; its workspace gets credits so that
 * priced requests are reserved and settled.
 */
export const startSwitchyard = async (options: {
  readonly name: string
  readonly logDir: string
  readonly dataDir: string
  readonly upstreamPort: number
  readonly width: number
  readonly databaseUrl?: string
  readonly cpuProfileDir?: string
  /** Another entry point than this checkout's production bundle (to compare a change). */
  readonly main?: string
  /**
   * `SWITCHYARD_LOG_LEVEL`: `info` (the default: one access line per request) or `warn` (no
   * access line for an answer under 500). Either way the log is JSON into the process's log file.
   */
  readonly logLevel?: "info" | "warn"
  /**
   * The key secrets of a store this harness started a gateway on before (bootstrap creates keys on
   * an empty store only); fresh ones otherwise.
   */
  readonly secrets?: { readonly managementKey: string; readonly apiKey: string }
  /** The PostgreSQL secret key of that earlier start (the store's credentials are encrypted with it). */
  readonly secretKey?: string
  /** The Node flags of another build's start script, in place of this checkout's (with `main`). */
  readonly startFlags?: ReadonlyArray<string>
  /** The environment of another build's start script, in place of this checkout's (with `main`). */
  readonly startEnv?: Readonly<Record<string, string>>
  /** The default workspace's embeddings cache (on unless `false`). */
  readonly cache?: boolean
  /** Node flags before the entry point (a `--import` preload). */
  readonly nodeFlags?: ReadonlyArray<string>
  /** More environment variables (for such a preload). */
  readonly env?: Readonly<Record<string, string>>
  /** Start it inside this cgroup (its `cgroup.procs` file). */
  readonly cgroupProcs?: string
  /** The endpoints' `max_batch_items` (64 unless given; the upstream must take as many). */
  readonly maxBatchItems?: number
  /**
   * Leave the credits to `fund()`: the start then sends nothing but `/api/v1/health` probes, so the
   * process can be measured idle as an operator's probe leaves it.
   */
  readonly fundLater?: boolean
}): Promise<Switchyard> => {
  const port = await freePort()
  Fs.mkdirSync(options.dataDir, { recursive: true })
  const configPath = NodePath.join(options.dataDir, "switchyard.json")
  Fs.writeFileSync(configPath, JSON.stringify(switchyardConfig(options.upstreamPort, options.width, options.cache ?? true, options.maxBatchItems ?? 64, options.startFlags === undefined), null, 2))
  const managementKey = options.secrets?.managementKey ?? newSecret()
  const apiKey = options.secrets?.apiKey ?? newSecret()
  const env = baseEnv()
  delete env.DATABASE_URL
  delete env.REDIS_URL
  Object.assign(env, {
    SWITCHYARD_HOST: "127.0.0.1",
    SWITCHYARD_PORT: String(port),
    SWITCHYARD_DATA_DIR: options.dataDir,
    SWITCHYARD_CONFIG: configPath,
    SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
    SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
    SWITCHYARD_RATE_LIMIT: "999999999/1s",
    SWITCHYARD_LOG_FORMAT: "json",
    SWITCHYARD_LOG_LEVEL: options.logLevel ?? "info",
    BENCH_UPSTREAM_API_KEY: upstreamApiKey,
    // PostgreSQL needs the key every replica encrypts stored credentials with: a fresh one per run.
    ...(options.databaseUrl !== undefined
      ? { DATABASE_URL: options.databaseUrl, SWITCHYARD_SECRET_KEY: options.secretKey ?? Crypto.randomBytes(32).toString("base64") }
      : {}),
    ...(options.startEnv ?? startEnvOf(serverDir)),
    ...options.env
  })
  const profile = options.cpuProfileDir === undefined ? [] : ["--cpu-prof", `--cpu-prof-dir=${options.cpuProfileDir}`]
  const child = spawnNode({ name: options.name, port, args: [...(options.startFlags ?? switchyardStartFlags()), ...profile, ...(options.nodeFlags ?? []), options.main ?? switchyardBundle()], env, logDir: options.logDir, ...(options.cgroupProcs !== undefined ? { cgroupProcs: options.cgroupProcs } : {}) })
  const base = `http://127.0.0.1:${port}/api/v1`
  // The first-start keys are made once the socket is open (Server.ts): until then a key is unknown.
  const fund = async () => {
    const grant = () =>
      fetch(`${base}/credits`, {
        method: "POST",
        headers: { authorization: `Bearer ${managementKey}`, "content-type": "application/json" },
        body: JSON.stringify({ amount: 1_000_000, note: "benchmark" })
      })
    let granted = await grant()
    for (const deadline = Date.now() + 30_000; granted.status === 401 && Date.now() < deadline && !child.exited();) {
      await granted.arrayBuffer()
      await sleep(100)
      granted = await grant()
    }
    if (!granted.ok) throw new Error(`${options.name}: adding credits answered ${granted.status}: ${await granted.text()}`)
  }
  try {
    await waitReady(child, async () => (await fetch(`${base}/health`, { signal: AbortSignal.timeout(2_000) })).ok, 300_000)
    if (options.fundLater !== true) await fund()
  } catch (error) {
    await child.stop()
    throw error
  }
  return { ...child, apiKey, managementKey, base, fund, store: options.databaseUrl === undefined ? "sqlite" : "postgres" }
}
