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
  /**
   * Silent, as a partitioned network is: connections stay open and new ones are accepted, and
   * nothing is passed on either way, until the next `cut` and `open`.
   */
  readonly silence: () => void
  /**
   * The partition heals for new connections only: the connections silenced stay open and silent
   * (black-holed, as when no reset ever reaches the client), new ones are passed on again.
   */
  readonly heal: () => void
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
  let silent = false
  const track = (s: Net.Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
    s.on("error", () => s.destroy())
  }
  const open = () =>
    new Promise<void>((resolve, reject) => {
      answers = true
      silent = false
      if (server?.listening === true) return resolve()
      server = Net.createServer((client) => {
        track(client)
        if (silent) return void client.pause()
        const upstream = Net.connect(Number(to.port || 5432), to.hostname)
        track(upstream)
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
  const silence = () => {
    silent = true
    answers = false
    for (const s of sockets) {
      s.unpipe()
      s.pause()
    }
  }
  const heal = () => {
    silent = false
    answers = true
    for (const s of sockets) s.removeAllListeners("data")
  }
  return { url: url.toString(), cut, open, dropAnswers, silence, heal }
}
