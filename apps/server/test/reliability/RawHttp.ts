import * as Http from "node:http"
import * as Net from "node:net"

export interface Answer {
  readonly status: number
  readonly headers: Http.IncomingHttpHeaders
  readonly text: string
  readonly json: any
  readonly ms: number
}

export interface Failure {
  readonly status: 0
  readonly error: string
  readonly ms: number
}

export interface RawRequest {
  readonly method: string
  readonly path: string
  readonly headers?: Readonly<Record<string, string | ReadonlyArray<string>>>
  readonly body?: string | Buffer
  /** Sent one after another, each after its delay, without Content-Length. */
  readonly chunks?: ReadonlyArray<{ readonly data: string | Buffer; readonly delayMs: number }>
  readonly timeoutMs?: number
}

// Node's agent applies the server's `Keep-Alive: timeout=N` hint to idle sockets only when it has a
// timeout of its own; without one it reuses sockets the server is closing (ECONNRESET).
const agent = new Http.Agent({ keepAlive: true, maxSockets: 32, timeout: 60_000 })

const parse = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/**
 * One request through `node:http`, which sends what `fetch` refuses to (any Host, any method,
 * bodies in slow chunks). Resolves with the answer, or with the transport error when none came.
 */
export const send = (origin: string, options: RawRequest): Promise<Answer | Failure> =>
  new Promise((resolve) => {
    const started = Date.now()
    const url = new URL(origin)
    let settled = false
    const finish = (value: Answer | Failure) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resolve(value)
    }
    const headers: Record<string, string | Array<string>> = {}
    for (const [name, value] of Object.entries(options.headers ?? {})) headers[name] = typeof value === "string" ? value : [...value]
    if (options.body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === "content-length")) {
      headers["content-length"] = String(Buffer.byteLength(options.body))
    }
    let request: Http.ClientRequest
    try {
      request = Http.request({
        host: url.hostname,
        port: url.port,
        method: options.method,
        path: options.path,
        headers,
        agent,
        setHost: !Object.keys(headers).some((h) => h.toLowerCase() === "host")
      }, (response) => {
        const parts: Array<Buffer> = []
        response.on("data", (chunk: Buffer) => parts.push(chunk))
        response.on("error", (error) => finish({ status: 0, error: `response: ${error.message}`, ms: Date.now() - started }))
        response.on("end", () => {
          const text = Buffer.concat(parts).toString("utf8")
          finish({ status: response.statusCode ?? 0, headers: response.headers, text, json: parse(text), ms: Date.now() - started })
        })
      })
    } catch (error) {
      return resolve({ status: 0, error: `not sent: ${(error as Error).message}`, ms: 0 })
    }
    const timer = setTimeout(() => {
      finish({ status: 0, error: "timed out", ms: Date.now() - started })
      request.destroy()
    }, options.timeoutMs ?? 30_000)
    request.on("error", (error) => finish({ status: 0, error: error.message, ms: Date.now() - started }))
    if (options.chunks !== undefined) {
      const chunks = options.chunks
      const next = (i: number) => {
        if (settled || request.destroyed) return
        if (i >= chunks.length) return request.end()
        setTimeout(() => {
          if (settled || request.destroyed) return
          request.write(chunks[i]!.data, () => next(i + 1))
        }, chunks[i]!.delayMs)
      }
      next(0)
    } else {
      request.end(options.body)
    }
  })

export const isAnswer = (reply: Answer | Failure): reply is Answer => reply.status !== 0

/** A JSON POST with a bearer key, as a client of the gateway sends it. */
export const postJson = (origin: string, path: string, key: string, body: unknown): Promise<Answer | Failure> =>
  send(origin, {
    method: "POST",
    path,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: JSON.stringify(body)
  })

/**
 * Bytes straight onto a socket, for requests no HTTP client would form; the raw answer.
 */
export const sendBytes = (origin: string, bytes: string | Buffer, timeoutMs = 10_000) =>
  new Promise<{ readonly raw: string; readonly status: number | undefined }>((resolve) => {
    const url = new URL(origin)
    const socket = Net.connect(Number(url.port), url.hostname)
    const parts: Array<Buffer> = []
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      const raw = Buffer.concat(parts).toString("latin1")
      const match = /^HTTP\/1\.[01] (\d{3})/u.exec(raw)
      resolve({ raw, status: match === null ? undefined : Number(match[1]) })
    }
    const timer = setTimeout(done, timeoutMs)
    socket.on("data", (chunk: Buffer) => {
      parts.push(chunk)
      const text = Buffer.concat(parts).toString("latin1")
      const head = text.indexOf("\r\n\r\n")
      if (head < 0) return
      const length = /\r\ncontent-length: *(\d+)/iu.exec(text.slice(0, head))
      if (length !== null && Buffer.byteLength(text, "latin1") >= head + 4 + Number(length[1])) done()
    })
    socket.on("error", done)
    socket.on("close", done)
    socket.write(bytes)
  })
