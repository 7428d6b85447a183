import { assert, describe, it } from "@effect/vitest"
import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as Http from "node:http"
import type * as Net from "node:net"
import * as Drain from "../../src/http/Drain.ts"

/** A server with the drain installed, and the switch a signal would throw. */
const serve = Effect.acquireRelease(
  Effect.promise(async () => {
    let draining = false
    const listeners: Array<() => void> = []
    const connections = Drain.make({
      draining: () => draining,
      onDrain: (f) => (draining ? f() : listeners.push(f))
    })
    // The drain's listener goes first, as in the gateway (its server's handler is added after).
    const server = Drain.install(Http.createServer(), connections)
    server.on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => response.end("ok"))
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const port = (server.address() as Net.AddressInfo).port
    const drain = () => {
      draining = true
      for (const f of listeners) f()
    }
    return { server, port, connections, drain }
  }),
  ({ server }) => Effect.sync(() => server.closeAllConnections())
)

interface Answer {
  readonly status?: number
  readonly connection?: string
  readonly error?: string
}

/** One request on the agent's kept-alive connections. */
const get = (port: number, agent: Http.Agent) =>
  Effect.promise(() =>
    new Promise<Answer>((resolve) => {
      const request = Http.get({ host: "127.0.0.1", port, path: "/", agent }, (response) => {
        response.resume()
        response.on("end", () => resolve({ status: response.statusCode!, connection: response.headers.connection ?? "" }))
      })
      request.on("error", (e: Error & { code?: string }) => resolve({ error: e.code ?? e.message }))
    })
  )

/** `n` kept-alive connections, each having carried one answer. */
const warm = (port: number, n: number) =>
  Effect.gen(function*() {
    const agent = new Http.Agent({ keepAlive: true, maxSockets: n })
    const answers = yield* Effect.all(Array.from({ length: n }, () => get(port, agent)), { concurrency: n })
    for (const answer of answers) assert.deepStrictEqual(answer, { status: 200, connection: "keep-alive" })
    return agent
  })

describe("draining kept-alive connections (Drain.ts)", () => {
  it.live("at the signal: new connections are refused, a request on a kept-alive one is answered with Connection: close, never reset", () =>
    Effect.gen(function*() {
      const { port, connections, drain } = yield* serve
      const agent = yield* warm(port, 4)
      assert.strictEqual(connections.open.size, 4)
      drain()
      // The idle connections stay open: their clients may be sending on them right now.
      assert.strictEqual(connections.open.size, 4)
      const answers = yield* Effect.all(Array.from({ length: 4 }, () => get(port, agent)), { concurrency: 4 })
      for (const answer of answers) assert.deepStrictEqual(answer, { status: 200, connection: "close" })
      // Each closed after its answer; a new connection is refused, not reset.
      while (connections.open.size > 0) yield* Effect.sleep("5 millis")
      assert.deepStrictEqual(yield* get(port, new Http.Agent({ keepAlive: true })), { error: "ECONNREFUSED" })
    }).pipe(Effect.scoped))

  it.effect("idle connections are kept for the grace (test clock), then closed; the wind-down ends when none is left", () =>
    Effect.gen(function*() {
      const { port, connections, drain } = yield* serve
      const agent = yield* warm(port, 3)
      drain()
      const windDown = yield* Effect.forkChild(Drain.windDown(connections, 5_000))
      yield* TestClock.adjust(Duration.millis(4_900))
      assert.strictEqual(connections.open.size, 3, "kept through the grace")
      // A request on one of them meanwhile is served, and closes it.
      assert.deepStrictEqual(yield* get(port, agent), { status: 200, connection: "close" })
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      assert.strictEqual(connections.open.size, 2)
      assert.isUndefined(windDown.pollUnsafe(), "still winding down")
      yield* TestClock.adjust(Duration.millis(200))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      yield* TestClock.adjust(Duration.millis(40))
      yield* Fiber.join(windDown)
      assert.strictEqual(connections.open.size, 0, "closed after the grace")
    }).pipe(Effect.scoped))

  it.effect("a grace of 0 closes idle connections at once", () =>
    Effect.gen(function*() {
      const { port, connections, drain } = yield* serve
      yield* warm(port, 2)
      drain()
      const windDown = yield* Effect.forkChild(Drain.windDown(connections, 0))
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
      yield* TestClock.adjust(Duration.millis(40))
      yield* Fiber.join(windDown)
      assert.strictEqual(connections.open.size, 0)
    }).pipe(Effect.scoped))

  it.effect("a request still running 25 s after the grace has its connection cut, so the stop ends (test clock)", () =>
    Effect.gen(function*() {
      let draining = false
      const listeners: Array<() => void> = []
      const connections = Drain.make({ draining: () => draining, onDrain: (f) => (draining ? f() : listeners.push(f)) })
      // A handler that never answers: an upstream that went silent.
      const server = Drain.install(Http.createServer(), connections)
      yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const port = (server.address() as Net.AddressInfo).port
      const answer = get(port, new Http.Agent({ keepAlive: true }))
      const pending = yield* Effect.forkChild(answer)
      while (connections.open.size === 0 || [...connections.open.values()].every((s) => s.active === 0)) {
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 5)))
      }
      draining = true
      for (const f of listeners) f()
      const windDown = yield* Effect.forkChild(Drain.windDown(connections, 1_000))
      yield* TestClock.adjust(Duration.millis(1_000 + Drain.requestsMillis - 100))
      assert.strictEqual(connections.open.size, 1, "kept while the request may still finish")
      yield* TestClock.adjust(Duration.millis(200))
      yield* Fiber.join(windDown)
      assert.deepStrictEqual(yield* Fiber.join(pending), { error: "ECONNRESET" })
      assert.strictEqual(Drain.longestMillis(5_000, 15_000), 45_000)
    }).pipe(Effect.scoped))
})
