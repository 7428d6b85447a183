import { assert, describe, layer } from "@effect/vitest"
import type { Observed } from "@switchyard/core/interns/InternLifecycle"
import { InternRuntime, type RuntimeEvent, RuntimeUnavailable } from "@switchyard/core/interns/InternRuntime"
import { Effect, Exit, Fiber, Layer, PubSub } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { InternControl } from "../../src/interns/InternControl.ts"
import { AuditLog } from "../../src/store/audit/AuditLog.ts"
import * as InternStoreLive from "../../src/store/interns/InternStoreLive.ts"
import { seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

// A runtime whose calls take effect at once but are confirmed only after 10 s (a process sent
// SIGTERM that takes its time to exit; an orchestrator that acts, then answers late), or never.
interface FakeRuntime {
  readonly running: Set<string>
  stopAnswer: "late" | "lost"
}

const fakeRuntime = (fake: FakeRuntime) =>
  Layer.effect(InternRuntime, Effect.gen(function*() {
    const events = yield* PubSub.unbounded<RuntimeEvent>()
    return InternRuntime.of({
      driver: "fake",
      start: (spec) =>
        Effect.sync(() => fake.running.add(spec.internId)).pipe(
          Effect.andThen(Effect.sleep("10 seconds")),
          Effect.as({ hostname: `${spec.name}.test` })
        ),
      stop: (id) =>
        Effect.sync(() => fake.running.delete(id)).pipe(
          Effect.andThen(fake.stopAnswer === "late" ? Effect.sleep("10 seconds") : Effect.fail(new RuntimeUnavailable({ message: "no answer within 5000 ms" })))
        ),
      destroy: () => Effect.void,
      inspect: (id) => Effect.succeed<Observed>(fake.running.has(id) ? { _tag: "Running" } : { _tag: "Stopped" }),
      subscribe: PubSub.subscribe(events)
    })
  }))

const setup = () =>
  Effect.gen(function*() {
    const who = yield* seedKey()
    const control = yield* InternControl
    const created = yield* control.create(who, { name: "steady" })
    return { who, control, id: created.id }
  })

// The store is built on the live clock (once per suite); the control plane and the runtime run
// on the test clock.
const Store = Layer.merge(InternStoreLive.layer, AuditLog.layer({ trustProxy: false })).pipe(Layer.provideMerge(sqlLayer()))

const withStore = (fake: FakeRuntime) =>
  Layer.mergeAll(InternControl.layer.pipe(Layer.provide(fakeRuntime(fake))), TestClock.layer())

const markRunning = (id: string, fake: FakeRuntime) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`UPDATE interns SET status = 'running', run_id = 'run-1', vault_id = ${`vault-${id}`}, hostname = 'steady.test' WHERE id = ${id}`
    fake.running.add(id)
  })

// Waits (on real I/O, not the clock: the store's queries take real time) until the runtime has
// been told what the request asks, so the interruption lands half-way.
const untilRuntime = (told: () => boolean) =>
  Effect.gen(function*() {
    for (let i = 0; i < 100_000 && !told(); i++) yield* Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
  })

// Lets the fibers the clock woke run to their end.
const settle = Effect.gen(function*() {
  for (let i = 0; i < 20; i++) yield* Effect.yieldNow
})

// The control flow under interruption is the subject, on the test clock: the embedded store answers
// within the clock's steps; PostgreSQL's network round trips do not, so the suite runs on SQLite.
describe.skipIf(storeKind === "postgres")("intern control", () =>
layer(Store, { timeout: 120_000, excludeTestServices: true })("an intern's stored state stays true when its request is cut short", (it) => {
  it.effect("a suspend whose request is interrupted half-way still records the stop it made", () => {
    const fake: FakeRuntime = { running: new Set(), stopAnswer: "late" }
    return Effect.gen(function*() {
      const { control, id, who } = yield* setup()
      yield* markRunning(id, fake)
      const request = yield* Effect.forkChild(control.suspend(who, id))
      yield* untilRuntime(() => !fake.running.has(id))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(request)
      assert.isFalse(fake.running.has(id), "the runtime was told to stop")
      yield* TestClock.adjust("10 seconds")
      yield* settle
      assert.strictEqual((yield* control.get(who, id)).status, "stopped")
    }).pipe(Effect.provide(withStore(fake)))
  })

  it.effect("a provision whose request is interrupted half-way still records the start it made, with its progress", () => {
    const fake: FakeRuntime = { running: new Set(), stopAnswer: "late" }
    return Effect.gen(function*() {
      const { control, id, who } = yield* setup()
      const request = yield* Effect.forkChild(control.provision(who, id))
      yield* untilRuntime(() => fake.running.has(id))
      yield* TestClock.adjust("1 second")
      yield* Fiber.interrupt(request)
      assert.isTrue(fake.running.has(id), "the runtime was told to start")
      yield* TestClock.adjust("10 seconds")
      yield* settle
      const intern = yield* control.get(who, id)
      assert.strictEqual(intern.status, "provisioning")
      assert.isNotNull(intern.progress, "progress is never null while provisioning")
      assert.strictEqual(intern.hostname, "steady.test")
    }).pipe(Effect.provide(withStore(fake)))
  })

  it.effect("a stop the runtime did not confirm is checked with the runtime afterwards", () => {
    const fake: FakeRuntime = { running: new Set(), stopAnswer: "lost" }
    return Effect.gen(function*() {
      const { control, id, who } = yield* setup()
      yield* markRunning(id, fake)
      const exit = yield* Effect.exit(control.suspend(who, id))
      assert.isTrue(Exit.isFailure(exit))
      assert.strictEqual((yield* control.get(who, id)).status, "running", "not confirmed yet: the request failed")
      yield* TestClock.adjust("2 seconds")
      yield* settle
      assert.strictEqual((yield* control.get(who, id)).status, "stopped", "the runtime says it stopped: so does the store")
    }).pipe(Effect.provide(withStore(fake)))
  })
}))
