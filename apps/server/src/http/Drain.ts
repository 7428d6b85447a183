import type * as Http from "node:http"

/**
 * What a draining server does to its connections, so that a load balancer in front loses nothing:
 *
 * - every answer not yet begun carries `Connection: close` (Node then closes the connection once
 *   it is sent), so a kept-alive client opens its next request elsewhere;
 * - idle kept-alive connections are closed at once, and each connection that becomes idle later
 *   (an answer whose headers had left before the drain began) as soon as it does;
 * - a request that still arrives on an old connection is answered, with `Connection: close`.
 *
 * `onDrain` registers what runs when the drain begins. Nothing is reset: a connection is closed
 * only between requests, never under one.
 */
export const install = <S extends Http.Server>(
  server: S,
  drain: { readonly draining: () => boolean; readonly onDrain: (f: () => void) => void }
): S => {
  const open = new Set<Http.ServerResponse>()
  const closeAfter = (response: Http.ServerResponse) => {
    if (!response.headersSent) response.setHeader("connection", "close")
  }
  server.on("request", (_request: Http.IncomingMessage, response: Http.ServerResponse) => {
    if (drain.draining()) return closeAfter(response)
    open.add(response)
    response.once("close", () => open.delete(response))
    response.once("finish", () => {
      open.delete(response)
      if (drain.draining()) setImmediate(() => server.closeIdleConnections())
    })
  })
  drain.onDrain(() => {
    for (const response of open) closeAfter(response)
    server.closeIdleConnections()
  })
  return server
}
