import type * as Http from "node:http"

/**
 * What a draining server does to its connections, so that a load balancer in front loses nothing:
 *
 * - every answer not yet begun carries `Connection: close` (Node then closes the connection once
 *   it is sent), so a kept-alive client opens its next request elsewhere;
 * - a request that still arrives on an old connection is answered, with `Connection: close`.
 *
 * Idle kept-alive connections are not closed at once: a client may be sending its next request on
 * one at that very moment, and closing it would reset that request. They are closed when the
 * server closes, after the linger (`lingerMillis`, Server.ts), by which time a client that was
 * about to send has sent and been answered with `Connection: close`.
 */
/**
 * How long a draining server keeps listening and its idle connections open before it closes
 * them: long enough for a request already on its way over a kept-alive connection to arrive (and
 * be answered with `Connection: close`), short beside any grace period.
 */
export const lingerMillis = 500

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
  })
  drain.onDrain(() => {
    for (const response of open) closeAfter(response)
  })
  return server
}
