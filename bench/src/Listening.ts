import type * as Http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A benchmark server listening on 127.0.0.1. `close` drops its kept-alive connections first, so
 * it never waits on an idle client.
 */
export interface Listening {
  readonly port: number
  readonly close: () => Promise<void>
}

/**
 * Starts `server` on 127.0.0.1 (`port`, or any free one) with connections kept alive for a
 * minute, as the load generator expects. `release` runs on close, after the connections are dropped
 * and before the server stops (the pass-through's upstream agent).
 */
export const listen = (server: Http.Server, port: number | undefined, release: () => void = () => {}): Promise<Listening> => {
  server.keepAliveTimeout = 60_000
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(port ?? 0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        port,
        close: () =>
          new Promise<void>((done) => {
            server.closeAllConnections()
            release()
            server.close(() => done())
          })
      })
    })
  })
}
