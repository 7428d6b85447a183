import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { Effect } from "effect"
import { fnv1a } from "../../src/providers/Fnv1a.ts"

export type Behaviour =
  | { readonly _tag: "Normal" }
  | { readonly _tag: "Status"; readonly status: number; readonly body?: string; readonly headers?: Readonly<Record<string, string>> }
  | { readonly _tag: "RateLimited"; readonly retryAfter?: string; readonly headers?: Readonly<Record<string, string>> }
  | { readonly _tag: "Hang" }
  | { readonly _tag: "Reset" }
  | { readonly _tag: "Truncated" }
  | { readonly _tag: "MalformedJson" }
  | { readonly _tag: "WrongWidth"; readonly width: number }
  | { readonly _tag: "WrongCount" }
  | { readonly _tag: "SlowBody"; readonly chunkDelayMs: number }
  | { readonly _tag: "Delay"; readonly ms: number }
  /**
   * Answers once `until` settles: a request kept in flight for exactly as long as a test needs.
   * `arrived` is called when the request is here (a latch the test waits on); `answer` is how it is
   * answered at release (normally when absent).
   */
  | { readonly _tag: "Held"; readonly until: Promise<void>; readonly arrived?: () => void; readonly answer?: Behaviour }

export interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly raw: string
  readonly body: unknown
}

interface Reply {
  readonly status: number
  readonly body: unknown
  readonly headers?: Readonly<Record<string, string>>
  /** Sent as it is instead of `body` as JSON (a file's content). */
  readonly text?: string
}

interface Shape {
  readonly width?: number
  readonly dropOne?: boolean
}

// One provider's wire format: answers a well-behaved request, and words its error bodies.
export interface FakeApi {
  readonly basePath: string
  readonly handle: (request: RecordedRequest, shape: Shape) => Reply
  readonly errorBody: (status: number, message: string) => unknown
}

export interface FakeServer {
  readonly url: string
  readonly requests: ReadonlyArray<RecordedRequest>
  readonly setBehaviour: (behaviour: Behaviour | ReadonlyArray<Behaviour>) => void
  readonly close: () => Promise<void>
}

export const normal: Behaviour = { _tag: "Normal" }

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

const parse = (raw: string): unknown => {
  try {
    return JSON.parse(raw)
  } catch {
    return undefined
  }
}

// A single behaviour holds until replaced; a list applies one per request, then Normal resumes.
export const start = (api: FakeApi, options: { readonly port?: number } = {}): Promise<FakeServer> => {
  const requests: Array<RecordedRequest> = []
  let persistent: Behaviour = normal
  let queue: Array<Behaviour> = []
  const sockets = new Set<Socket>()
  const timers = new Set<NodeJS.Timeout>()

  const later = (ms: number, f: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      f()
    }, ms)
    timers.add(timer)
  }

  const sendJson = (response: Http.ServerResponse, reply: Reply) => {
    const text = reply.text ?? JSON.stringify(reply.body)
    response.writeHead(reply.status, {
      "content-type": reply.text === undefined ? "application/json" : "application/octet-stream",
      "content-length": Buffer.byteLength(text),
      ...reply.headers
    })
    response.end(text)
  }

  const respond = async (request: RecordedRequest, response: Http.ServerResponse, behaviour: Behaviour): Promise<unknown> => {
    switch (behaviour._tag) {
      case "Normal":
        return sendJson(response, api.handle(request, {}))
      case "WrongWidth":
        return sendJson(response, api.handle(request, { width: behaviour.width }))
      case "WrongCount":
        return sendJson(response, api.handle(request, { dropOne: true }))
      case "Delay":
        await sleep(behaviour.ms)
        return sendJson(response, api.handle(request, {}))
      case "Held":
        behaviour.arrived?.()
        await behaviour.until
        return behaviour.answer === undefined ? sendJson(response, api.handle(request, {})) : respond(request, response, behaviour.answer)
      case "Status": {
        const text = behaviour.body ?? JSON.stringify(api.errorBody(behaviour.status, `fake failure ${behaviour.status}`))
        response.writeHead(behaviour.status, {
          "content-type": "application/json",
          "content-length": Buffer.byteLength(text),
          ...behaviour.headers
        })
        return response.end(text)
      }
      case "RateLimited":
        return sendJson(response, {
          status: 429,
          body: api.errorBody(429, "rate limit exceeded"),
          headers: { ...(behaviour.retryAfter !== undefined ? { "retry-after": behaviour.retryAfter } : {}), ...behaviour.headers }
        })
      case "Hang":
        return
      case "Reset":
        return response.socket?.destroy()
      case "Truncated": {
        const text = JSON.stringify(api.handle(request, {}).body)
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
        response.write(text.slice(0, Math.floor(text.length / 2)))
        return later(20, () => response.socket?.destroy())
      }
      case "MalformedJson": {
        const text = JSON.stringify(api.handle(request, {}).body)
        const cut = text.slice(0, Math.floor(text.length / 2))
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(cut) })
        return response.end(cut)
      }
      case "SlowBody": {
        const text = JSON.stringify(api.handle(request, {}).body)
        response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(text) })
        const chunks = text.match(/[\s\S]{1,64}/gu) ?? []
        const next = (i: number) => {
          if (response.destroyed) return
          if (i >= chunks.length) return response.end()
          response.write(chunks[i])
          later(behaviour.chunkDelayMs, () => next(i + 1))
        }
        return next(0)
      }
    }
  }

  const server = Http.createServer((incoming, response) => {
    const chunks: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
    incoming.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      const request: RecordedRequest = {
        method: incoming.method ?? "",
        path: incoming.url ?? "",
        headers: incoming.headers,
        raw,
        body: parse(raw)
      }
      requests.push(request)
      const behaviour = queue.shift() ?? persistent
      respond(request, response, behaviour).catch(() => response.socket?.destroy())
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })

  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(options.port ?? 0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}${api.basePath}`,
        requests,
        setBehaviour: (behaviour) => {
          if (Array.isArray(behaviour)) {
            queue = [...behaviour]
          } else {
            queue = []
            persistent = behaviour as Behaviour
          }
        },
        close: () =>
          new Promise<void>((done) => {
            timers.forEach(clearTimeout)
            timers.clear()
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}

export const scoped = (starting: () => Promise<FakeServer>) =>
  Effect.acquireRelease(Effect.promise(starting), (server) => Effect.promise(() => server.close()))

// Deterministic float32-exact values, so base64 round trips are byte-for-byte.
export const vectorFor = (seed: string, width: number): Array<number> => {
  let state = fnv1a(seed)
  const out = new Array<number>(width)
  for (let i = 0; i < width; i++) {
    state = (state + 0x6d2b79f5) >>> 0
    let t = state
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    const unit = ((t ^ (t >>> 14)) >>> 0) / 4294967296
    out[i] = Math.fround(unit * 2 - 1)
  }
  return out
}

export const float32Base64 = (vector: ReadonlyArray<number>): string => {
  const bytes = Buffer.alloc(vector.length * 4)
  vector.forEach((value, i) => {
    bytes.writeFloatLE(value, i * 4)
  })
  return bytes.toString("base64")
}

export const wordCount = (text: string): number => text.split(/\s+/u).filter((word) => word !== "").length

export const bearer = (request: RecordedRequest): string | undefined => {
  const header = request.headers.authorization
  return header?.startsWith("Bearer ") ? header.slice("Bearer ".length) : undefined
}

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** The words of a text: what the fakes count as its tokens. */
const words = (text: string): Array<string> => text.split(/\s+/u).filter((word) => word !== "")

/** A text cut to its first (`end`: the end goes) or last (`start`) `max` words, as a provider's truncation. */
export const cutWords = (text: string, max: number, side: "start" | "end"): string => {
  const all = words(text)
  return all.length <= max ? text : (side === "end" ? all.slice(0, max) : all.slice(all.length - max)).join(" ")
}

/**
 * One bit a dimension, 1 when positive, the first dimension in the highest bit, as Cohere's and
 * Voyage's references describe `ubinary`; `binary` is each byte minus 128.
 */
export const packed = (vector: ReadonlyArray<number>, signed: boolean): Array<number> => {
  const out: Array<number> = []
  for (let i = 0; i < vector.length; i += 8) {
    let byte = 0
    for (let j = 0; j < 8; j++) byte = byte * 2 + (i + j < vector.length && vector[i + j]! > 0 ? 1 : 0)
    out.push(signed ? byte - 128 : byte)
  }
  return out
}

/** A provider's own int8 (Cohere and Voyage scale floats in -1..1 by 127), or uint8 (plus 128). */
export const scaled = (vector: ReadonlyArray<number>, unsigned: boolean): Array<number> =>
  vector.map((x) => Math.max(-128, Math.min(127, Math.round(x * 127))) + (unsigned ? 128 : 0))

/** A vector in one of the quantized types providers make, or the floats. */
export const ofType = (vector: ReadonlyArray<number>, type: string): Array<number> =>
  type === "int8" ? scaled(vector, false) : type === "uint8" ? scaled(vector, true) : type === "binary" ? packed(vector, true) : type === "ubinary" ? packed(vector, false) : [...vector]
