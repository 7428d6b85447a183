import type { Observed } from "@switchyard/core/interns/InternLifecycle"
import { InternRuntime, type RuntimeEvent, type RuntimeSpec, RuntimeUnavailable } from "@switchyard/core/interns/InternRuntime"
import type { InternProgress } from "@switchyard/core/schema/Intern"
import { Effect, Layer, Option, PubSub } from "effect"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs/promises"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

/**
 * The `process` driver: each provisioned intern is a supervised local process running
 * `runtime/InternProcess.ts` with its own data directory `<root>/<internId>` (its disk).
 */
export interface ProcessRuntimeOptions {
  readonly root: string
  /** A pause before each provisioning step, to make the steps observable; 0 in production. */
  readonly stepDelayMs?: number
  readonly stopTimeoutMs?: number
}

// In the bundle this module is part of `dist/main.mjs` and the program is `dist/runtime/InternProcess.mjs`.
const programPath = fileURLToPath(new URL(`./runtime/InternProcess${import.meta.url.endsWith(".ts") ? ".ts" : ".mjs"}`, import.meta.url))

const hostnameFor = (name: string, internId: string) =>
  `${name}-${internId.replace(/-/gu, "").slice(-8)}.interns.localhost`

interface Supervised {
  readonly child: ChildProcess.ChildProcess
  readonly runId: string
  readonly exited: Promise<void>
  ready: boolean
  progress: InternProgress | null
  stopping: boolean
  failure: string | undefined
  stderr: string
}

interface RuntimeFile {
  readonly pid: number
  readonly port: number
  readonly run_id: string
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const lastLine = (text: string) =>
  text.split("\n").map((l) => l.trim()).filter((l) => l.length > 0 && !l.startsWith("(node:")).at(-1)

const describeExit = (s: Supervised, code: number | null, signal: NodeJS.Signals | null) => {
  const detail = s.failure ?? lastLine(s.stderr)
  const how = signal !== null ? `killed by ${signal}` : `exit code ${code}`
  const what = s.ready ? "The intern runtime stopped unexpectedly" : "Provisioning failed"
  return detail === undefined ? `${what} (${how})` : `${what}: ${detail} (${how})`
}

/** Whether the process listening on `port` says it is this intern's. */
const answersAs = (port: number, internId: string) =>
  Effect.promise(() =>
    fetch(`http://127.0.0.1:${port}/health`, { signal: AbortSignal.timeout(1_000) })
      .then((r) => r.json() as Promise<{ readonly intern_id?: string }>)
      .then((body) => body.intern_id === internId)
      .catch(() => false)
  )

type ChildMessage = { readonly type: string } & Record<string, unknown>

/** What an intern process says over IPC: its progress, that it is ready, or why it failed. */
const onMessage = (s: Supervised, spec: RuntimeSpec, message: ChildMessage, publish: (event: RuntimeEvent) => void) => {
  if (message.type === "progress") {
    s.progress = {
      step_label: String(message.step_label),
      step_number: Number(message.step_number),
      total_steps: Number(message.total_steps)
    }
    publish({ _tag: "Progress", internId: spec.internId, runId: spec.runId, progress: s.progress })
  } else if (message.type === "ready") {
    s.ready = true
    s.progress = null
    publish({ _tag: "Ready", internId: spec.internId, runId: spec.runId })
  } else if (message.type === "error") {
    s.failure = String(message.message)
  }
}

/** The message that configures a started intern process. */
const configuration = (spec: RuntimeSpec, hostname: string, stepDelayMs: number) => ({
  type: "configure",
  config: {
    internId: spec.internId,
    runId: spec.runId,
    workspaceId: spec.workspaceId,
    name: spec.name,
    hostname,
    instructions: spec.instructions,
    model: spec.model,
    vaultId: spec.vaultId,
    attachedVaultId: spec.attachedVaultId,
    stepDelayMs
  }
})

const make = (options: ProcessRuntimeOptions) =>
  Effect.gen(function*() {
    const root = Path.resolve(options.root)
    const stopTimeoutMs = options.stopTimeoutMs ?? 5_000
    const events = yield* PubSub.unbounded<RuntimeEvent>()
    const children = new Map<string, Supervised>()
    let closing = false

    yield* Effect.tryPromise({
      try: () => Fs.mkdir(root, { recursive: true }),
      catch: (cause) => new RuntimeUnavailable({ message: `Cannot create ${root}: ${String(cause)}` })
    })

    const dirOf = (internId: string) => Path.join(root, internId)

    const publish = (event: RuntimeEvent) => {
      if (!closing) PubSub.publishUnsafe(events, event)
    }

    const awaitExit = (s: Supervised) =>
      Effect.promise(() => s.exited).pipe(
        Effect.timeoutOption(stopTimeoutMs),
        Effect.flatMap(Option.match({
          onSome: () => Effect.void,
          onNone: () =>
            Effect.sync(() => s.child.kill("SIGKILL")).pipe(Effect.andThen(Effect.promise(() => s.exited)))
        }))
      )

    const stopChild = (s: Supervised) =>
      Effect.suspend(() => {
        s.stopping = true
        if (s.child.exitCode === null && s.child.signalCode === null) s.child.kill("SIGTERM")
        return awaitExit(s)
      })

    const readRuntimeFile = (internId: string) =>
      Effect.promise(() =>
        Fs.readFile(Path.join(dirOf(internId), "runtime.json"), "utf8")
          .then((text) => JSON.parse(text) as RuntimeFile)
          .catch(() => undefined)
      )

    // A process of an earlier gateway that has not exited yet: stop it before starting another.
    const stopStray = (internId: string) =>
      Effect.gen(function*() {
        const file = yield* readRuntimeFile(internId)
        if (file === undefined || children.has(internId)) return
        if (isAlive(file.pid) && (yield* answersAs(file.port, internId))) {
          process.kill(file.pid, "SIGTERM")
          const gone = yield* Effect.sleep(50).pipe(
            Effect.andThen(Effect.sync(() => !isAlive(file.pid))),
            Effect.repeat({ until: (dead) => dead, times: Math.ceil(stopTimeoutMs / 50) })
          )
          if (!gone && isAlive(file.pid)) process.kill(file.pid, "SIGKILL")
        }
        yield* Effect.promise(() => Fs.rm(Path.join(dirOf(internId), "runtime.json"), { force: true }))
      })

    const spawn = (spec: RuntimeSpec, hostname: string) =>
      Effect.callback<Supervised, RuntimeUnavailable>((resume) => {
        let exitedResolve!: () => void
        const exited = new Promise<void>((resolve) => {
          exitedResolve = resolve
        })
        const child = ChildProcess.spawn(
          process.execPath,
          ["--disable-warning=ExperimentalWarning", programPath, dirOf(spec.internId)],
          { stdio: ["ignore", "ignore", "pipe", "ipc"], env: {} }
        )
        const s: Supervised = {
          child,
          runId: spec.runId,
          exited,
          ready: false,
          progress: null,
          stopping: false,
          failure: undefined,
          stderr: ""
        }
        let spawned = false
        child.once("error", (error) => {
          if (!spawned) resume(Effect.fail(new RuntimeUnavailable({ message: `Cannot start the intern process: ${error.message}` })))
        })
        child.stderr?.on("data", (chunk: Buffer) => {
          s.stderr = (s.stderr + chunk.toString("utf8")).slice(-4_000)
        })
        child.on("message", (message: ChildMessage) => onMessage(s, spec, message, publish))
        child.once("close", (code, signal) => {
          if (children.get(spec.internId) === s) children.delete(spec.internId)
          exitedResolve()
          if (s.stopping) publish({ _tag: "RuntimeStopped", internId: spec.internId, runId: spec.runId })
          else publish({ _tag: "Crashed", internId: spec.internId, runId: spec.runId, message: describeExit(s, code, signal) })
        })
        child.once("spawn", () => {
          spawned = true
          children.set(spec.internId, s)
          child.send(configuration(spec, hostname, options.stepDelayMs ?? 0))
          resume(Effect.succeed(s))
        })
      })

    const stop = (internId: string) =>
      Effect.gen(function*() {
        const s = children.get(internId)
        if (s !== undefined) yield* stopChild(s)
        yield* stopStray(internId)
      })

    yield* Effect.addFinalizer(() =>
      Effect.suspend(() => {
        closing = true
        return Effect.forEach([...children.values()], stopChild, { concurrency: "unbounded", discard: true })
      })
    )

    return InternRuntime.of({
      driver: "process",
      start: (spec) =>
        Effect.gen(function*() {
          yield* stop(spec.internId)
          const hostname = spec.hostname ?? hostnameFor(spec.name, spec.internId)
          yield* spawn(spec, hostname)
          return { hostname }
        }),
      stop,
      destroy: (internId) =>
        stop(internId).pipe(
          Effect.andThen(Effect.tryPromise({
            try: () => Fs.rm(dirOf(internId), { recursive: true, force: true }),
            catch: (cause) => new RuntimeUnavailable({ message: `Cannot erase the intern's disk: ${String(cause)}` })
          }))
        ),
      inspect: (internId) =>
        Effect.gen(function*() {
          const s = children.get(internId)
          if (s !== undefined) {
            return s.ready ? { _tag: "Running" } : { _tag: "Starting", progress: s.progress } satisfies Observed
          }
          const exists = yield* Effect.promise(() => Fs.stat(dirOf(internId)).then(() => true, () => false))
          return exists ? { _tag: "Stopped" } : { _tag: "Absent" } satisfies Observed
        }),
      subscribe: PubSub.subscribe(events)
    })
  })

export const layer = (options: ProcessRuntimeOptions) => Layer.effect(InternRuntime, make(options))
