import { assert, describe, it } from "@effect/vitest"
import { InternRuntime, type RuntimeEvent, type RuntimeSpec } from "@switchyard/core/interns/InternRuntime"
import { Effect, PubSub, type Scope } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as ProcessRuntime from "../../src/interns/ProcessRuntime.ts"

const spec = (internId: string, runId: string): RuntimeSpec => ({
  internId,
  runId,
  workspaceId: "ws",
  name: "scout",
  hostname: null,
  instructions: "Answer briefly.",
  model: "openai/gpt-4o",
  vaultId: "vault-1",
  attachedVaultId: null
})

const nextEvent = (subscription: PubSub.Subscription<RuntimeEvent>, tag: RuntimeEvent["_tag"]) =>
  PubSub.take(subscription).pipe(Effect.repeat({ until: (e) => e._tag === tag }), Effect.timeout("10 seconds"))

const withRuntime = <A, E>(f: (root: string) => Effect.Effect<A, E, InternRuntime | Scope.Scope>) => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "switchyard-runtime-"))
  return Effect.scoped(f(root).pipe(Effect.provide(ProcessRuntime.layer({ root })))).pipe(
    Effect.ensuring(Effect.sync(() => Fs.rmSync(root, { recursive: true, force: true })))
  )
}

const health = (port: number) => fetch(`http://127.0.0.1:${port}/health`).then((r) => r.json() as Promise<Record<string, unknown>>)

const runtimeFile = (root: string, id: string) =>
  JSON.parse(Fs.readFileSync(Path.join(root, id, "runtime.json"), "utf8")) as { pid: number; port: number }

describe("ProcessRuntime", () => {
  it.live("starts a process that reports its steps, serves health, and stops keeping its disk", () =>
    withRuntime((root) =>
      Effect.gen(function*() {
        const runtime = yield* InternRuntime
        const events = yield* runtime.subscribe
        const started = yield* runtime.start(spec("i-0001", "run-1"))
        assert.match(started.hostname, /^scout-.+\.interns\.localhost$/)
        const seen: Array<RuntimeEvent> = []
        while (seen.at(-1)?._tag !== "Ready") seen.push(yield* nextEvent(events, seen.length < 4 ? "Progress" : "Ready"))
        assert.deepStrictEqual(
          seen.filter((e) => e._tag === "Progress").map((e) => e._tag === "Progress" ? e.progress.step_number : 0),
          [1, 2, 3, 4]
        )
        assert.deepStrictEqual((yield* runtime.inspect("i-0001"))._tag, "Running")
        const file = runtimeFile(root, "i-0001")
        const body = yield* Effect.promise(() => health(file.port))
        assert.strictEqual(body.intern_id, "i-0001")
        assert.strictEqual(body.model, "openai/gpt-4o")
        assert.strictEqual(Fs.readFileSync(Path.join(root, "i-0001", "workspace", "INSTRUCTIONS.md"), "utf8"), "Answer briefly.")

        yield* runtime.stop("i-0001")
        const stopped = yield* nextEvent(events, "RuntimeStopped")
        assert.strictEqual(stopped.runId, "run-1")
        assert.throws(() => process.kill(file.pid, 0))
        assert.isTrue(Fs.existsSync(Path.join(root, "i-0001", "workspace")))
        assert.deepStrictEqual(yield* runtime.inspect("i-0001"), { _tag: "Stopped" })
        assert.deepStrictEqual(yield* runtime.inspect("i-none"), { _tag: "Absent" })

        yield* runtime.destroy("i-0001")
        assert.isFalse(Fs.existsSync(Path.join(root, "i-0001")))
      })
    ), { timeout: 30_000 })

  it.live("reports a crash during provisioning with the process's own reason", () =>
    withRuntime((root) =>
      Effect.gen(function*() {
        const runtime = yield* InternRuntime
        const events = yield* runtime.subscribe
        Fs.mkdirSync(Path.join(root, "i-0002"))
        Fs.writeFileSync(Path.join(root, "i-0002", "vault"), "not a directory")
        yield* runtime.start(spec("i-0002", "run-1"))
        const crashed = yield* nextEvent(events, "Crashed")
        assert.strictEqual(crashed.runId, "run-1")
        assert.match(crashed._tag === "Crashed" ? crashed.message : "", /^Provisioning failed: EEXIST.*\(exit code 1\)$/)
        assert.deepStrictEqual(yield* runtime.inspect("i-0002"), { _tag: "Stopped" })
      })
    ), { timeout: 30_000 })

  it.live("stops its processes when its scope closes", () =>
    Effect.gen(function*() {
      let pid = 0
      yield* withRuntime((root) =>
        Effect.gen(function*() {
          const runtime = yield* InternRuntime
          const events = yield* runtime.subscribe
          yield* runtime.start(spec("i-0003", "run-1"))
          yield* nextEvent(events, "Ready")
          pid = runtimeFile(root, "i-0003").pid
        })
      )
      assert.isAbove(pid, 0)
      assert.throws(() => process.kill(pid, 0))
    }), { timeout: 30_000 })
})
