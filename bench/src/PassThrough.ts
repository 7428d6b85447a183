import * as Http from "node:http"
import * as Listening from "./Listening.ts"

const hopByHop = new Set(["connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te", "trailer"])

/**
 * The floor: the least a gateway written on node:http can do. Each request goes to the upstream
 * as it came (method, path, headers, body streamed), over kept-alive connections, and the answer
 * streams back untouched.
 */
export const start = (options: { readonly upstreamPort: number; readonly port?: number }): Promise<Listening.Listening> => {
  const agent = new Http.Agent({ keepAlive: true, maxSockets: Infinity, maxFreeSockets: 1024 })
  const upstreamHost = `127.0.0.1:${options.upstreamPort}`

  const server = Http.createServer((incoming, outgoing) => {
    const headers: Http.OutgoingHttpHeaders = {}
    for (const [name, value] of Object.entries(incoming.headers)) {
      if (!hopByHop.has(name)) headers[name] = value
    }
    headers.host = upstreamHost
    const forward = Http.request({
      host: "127.0.0.1",
      port: options.upstreamPort,
      method: incoming.method,
      path: incoming.url,
      headers,
      agent
    }, (answer) => {
      const back: Http.OutgoingHttpHeaders = {}
      for (const [name, value] of Object.entries(answer.headers)) {
        if (!hopByHop.has(name)) back[name] = value
      }
      outgoing.writeHead(answer.statusCode ?? 502, back)
      answer.pipe(outgoing)
    })
    forward.on("error", () => {
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "application/json" })
      outgoing.end(`{"error":{"code":502,"message":"upstream unreachable"}}`)
    })
    incoming.pipe(forward)
  })
  return Listening.listen(server, options.port, () => agent.destroy())
}
