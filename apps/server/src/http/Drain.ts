import { Context, Duration, Effect } from "effect"
import type * as Http from "node:http"
import * as Net from "node:net"

/**
 * How a stopping server lets go of its connections so that nobody behind a load balancer is reset
 * (HTTP/1.1 keep-alive's classic race: a request already on the wire when the server closes an
 * idle connection).
 *
 * At the signal (`SIGTERM`, `SIGINT`):
 *
 * - readiness answers 503 at once (`/api/v1/health`, ServedRequests.ts), so the load balancer takes
 *   the process out of rotation;
 * - the listening socket stops accepting: a new connection is refused, which a client knows it
 *   never sent anything on;
 * - every answer not begun yet carries `Connection: close`, and Node closes its connection once it
 *   is sent, so a kept-alive client opens its next request elsewhere;
 * - an idle kept-alive connection is left open: its client may be sending on it right now. It
 *   closes after carrying one more answer (with `Connection: close`), or once it has been idle
 *   longer than the server's keep-alive time (Node closes it then, and a client that honours the
 *   `Keep-Alive: timeout` header has stopped using it before).
 *
 * The process waits for that for at most the grace (`SWITCHYARD_DRAIN_GRACE_MS`, default 5 s, the
 * keep-alive time: by then every connection idle at the signal has closed by itself); what is still
 * idle after it is closed (only a grace shorter than the keep-alive time leaves any), and the
 * requests still running are waited for, 25 s at most: then their connections are cut
 * ({@link longestMillis}).
 */
export interface Connections {
  /** Open connections, with how many requests each is answering now. */
  readonly open: Map<Net.Socket, { active: number }>
  /** Whether the process is stopping. */
  readonly draining: () => boolean
  /** Runs `f` when the process starts stopping (at once if it already is). */
  readonly onDrain: (f: () => void) => void
}

/** The server's connections, as the drain sees them. */
export class DrainConnections extends Context.Service<DrainConnections, Connections>()("@switchyard/server/http/Drain/DrainConnections") {}

/** The default grace: Node's keep-alive time, after which an idle connection closes by itself. */
export const defaultGraceMillis = 5_000

/** How long requests still running after the grace may take before their connections are cut. */
export const requestsMillis = 25_000

/**
 * The longest a stop takes from the signal to the exit, the figure a platform's grace period
 * (Kubernetes' `terminationGracePeriodSeconds`, after its `preStop`) must exceed: the grace, the
 * requests' 25 s, then the rest of an upstream attempt a cut request was waiting on (a request
 * ends with its current attempt, so `attemptMillis` is the longest time limit of one upstream
 * call: `SWITCHYARD_ATTEMPT_TIMEOUT_MS`, or a provider's longer `timeout_ms`). The ledger's last
 * write follows, in milliseconds.
 */
export const longestMillis = (graceMillis: number, attemptMillis: number): number => graceMillis + requestsMillis + attemptMillis

export const make = (drain: { readonly draining: () => boolean; readonly onDrain: (f: () => void) => void }): Connections => ({
  open: new Map(),
  draining: drain.draining,
  onDrain: drain.onDrain
})

export const install = <S extends Http.Server>(server: S, connections: Connections): S => {
  const answering = new Set<Http.ServerResponse>()
  const closeAfter = (response: Http.ServerResponse) => {
    if (!response.headersSent) response.setHeader("connection", "close")
  }
  server.on("connection", (socket: Net.Socket) => {
    connections.open.set(socket, { active: 0 })
    socket.once("close", () => connections.open.delete(socket))
  })
  server.on("request", (request: Http.IncomingMessage, response: Http.ServerResponse) => {
    const state = connections.open.get(request.socket)
    if (state !== undefined) state.active++
    response.once("close", () => {
      if (state !== undefined) state.active--
      answering.delete(response)
    })
    if (connections.draining()) return closeAfter(response)
    answering.add(response)
  })
  connections.onDrain(() => {
    for (const response of answering) closeAfter(response)
    // Stop accepting, and only that: `http.Server#close` would also close the idle connections
    // at once, which is the race this module is here to avoid.
    if (server.listening) Net.Server.prototype.close.call(server)
  })
  return server
}

/**
 * Once stopping: waits until every connection has closed or the grace is over, closes what is
 * idle then, and waits for the requests still running (at most 25 s more). Times are the Effect
 * `Clock`'s.
 */
export const windDown = (connections: Connections, graceMillis: number): Effect.Effect<void> =>
  Effect.gen(function*() {
    const poll = Duration.millis(20)
    const graceSteps = Math.ceil(graceMillis / 20)
    for (let i = 0; i < graceSteps && connections.open.size > 0; i++) yield* Effect.sleep(poll)
    for (const [socket, state] of connections.open) if (state.active === 0) socket.destroy()
    const steps = requestsMillis / 20
    for (let i = 0; i < steps && connections.open.size > 0; i++) yield* Effect.sleep(poll)
    // What still runs is cut: the server's close waits for its connections, and a request whose
    // upstream never answers would otherwise hold the process past any grace its platform gives.
    for (const socket of connections.open.keys()) socket.destroy()
  })
