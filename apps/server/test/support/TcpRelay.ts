import * as Net from "node:net"

/**
 * A TCP relay to PostgreSQL that can be cut: the database becomes unreachable exactly as when
 * its host goes away (connections reset, new ones refused), and reachable again on the same port.
 * It can also go silent, as a partitioned network does: connections stay open, new ones are
 * accepted, and nothing is passed on either way.
 */
export const relay = async (target: URL) => {
  const sockets = new Set<Net.Socket>()
  let server: Net.Server | undefined
  let port = 0
  let silent = false
  const track = (s: Net.Socket) => {
    sockets.add(s)
    s.on("close", () => sockets.delete(s))
    s.on("error", () => s.destroy())
  }
  const open = () =>
    new Promise<void>((resolve, reject) => {
      silent = false
      server = Net.createServer((client) => {
        track(client)
        if (silent) return client.pause()
        const upstream = Net.connect(Number(target.port || 5432), target.hostname)
        track(upstream)
        client.pipe(upstream).pipe(client)
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
      server?.close(() => resolve())
    })
  const silence = () => {
    silent = true
    for (const s of sockets) {
      s.unpipe()
      s.pause()
    }
  }
  await open()
  const url = new URL(target)
  url.hostname = "127.0.0.1"
  url.port = String(port)
  return { url: url.toString(), cut, open, silence }
}
