import * as Net from "node:net"

export interface StoreRelay {
  /** The database's URL through the relay. */
  readonly url: string
  /** The database becomes unreachable as when its host goes away: connections reset, new ones refused. */
  readonly cut: () => Promise<void>
  /** Reachable again on the same port. */
  readonly open: () => Promise<void>
  /**
   * Statements still reach the database but no answer comes back, until the next `cut`: a write
   * commits while its client sees only a broken connection.
   */
  readonly dropAnswers: () => void
}

/**
 * A TCP relay to PostgreSQL that can be cut, for tests of what the gateway does while its store
 * does not answer.
 */
export const startStoreRelay = async (target: URL | string): Promise<StoreRelay> => {
  const to = new URL(target)
  const sockets = new Set<Net.Socket>()
  let server: Net.Server | undefined
  let port = 0
  let answers = true
  const open = () =>
    new Promise<void>((resolve, reject) => {
      answers = true
      if (server?.listening === true) return resolve()
      server = Net.createServer((client) => {
        const upstream = Net.connect(Number(to.port || 5432), to.hostname)
        for (const s of [client, upstream]) {
          sockets.add(s)
          s.on("close", () => sockets.delete(s))
          s.on("error", () => s.destroy())
        }
        client.pipe(upstream)
        upstream.on("data", (chunk: Buffer) => {
          if (answers) client.write(chunk)
        })
        upstream.on("end", () => client.end())
      })
      server.once("error", reject)
      server.listen(port, "127.0.0.1", () => {
        port = (server!.address() as Net.AddressInfo).port
        resolve()
      })
    })
  const cut = () =>
    new Promise<void>((resolve) => {
      for (const s of sockets) s.destroy()
      if (server === undefined || !server.listening) return resolve()
      server.close(() => resolve())
    })
  await open()
  const url = new URL(to)
  url.hostname = "127.0.0.1"
  url.port = String(port)
  const dropAnswers = () => {
    answers = false
  }
  return { url: url.toString(), cut, open, dropAnswers }
}
