import { codes } from "@switchyard/core/errors/InternError"
import { limits } from "@switchyard/core/schema/Intern"
import * as Batch from "@switchyard/core/schema/Batch"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Config, Effect, Layer } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpEffect, HttpIncomingMessage, HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import type * as Http from "node:http"
import * as Stream from "node:stream"
import * as JsonDepth from "./JsonDepth.ts"
import { MemoryBudget } from "./MemoryBudget.ts"
import * as MemoryBudgetModule from "./MemoryBudget.ts"

/**
 * Body limits and envelopes that apply before and after every route: a body limit sized to what
 * the route takes (the configurable one for the model routes, which take batches; the spec's
 * 1 MiB for interns; 256 KiB for management routes), a bound on JSON nesting checked on the
 * bytes before they become objects, the memory budget of the bytes in flight (MemoryBudget.ts),
 * a time limit on receiving the body (`SWITCHYARD_BODY_TIMEOUT_MS`, default 60 s), and the spec's
 * error envelope for the responses the HTTP layer produces without a body (unknown route, body
 * over the limit, unsupported content type...).
 */
export interface PolicyOptions {
  readonly maxBodyBytes: number
  readonly bodyTimeoutMs?: number | undefined
}

const BodyTimeoutConfig = Config.Int("SWITCHYARD_BODY_TIMEOUT_MS").pipe(Config.withDefault(60_000))

/**
 * The time limit of an intern request (`408` in the intern envelope); it also bounds receiving
 * an intern request's body.
 */
export const InternRequestTimeoutConfig = Config.Int("SWITCHYARD_INTERN_REQUEST_TIMEOUT_MS").pipe(Config.withDefault(30_000))

const internBodyLimit = limits.body

/** The body limit of management routes (keys, credits, BYOK, workspaces, providers...). */
const managementBodyLimit = 256 * 1024

const internPath = /^\/api\/v1\/interns(\/|$|\?)/u

// The routes whose bodies are batches (embeddings, rerank, their plans and the Cohere-shaped
// rerank): they take the configurable limit.
const modelPath = /^(\/api)?\/v[12]\/(embeddings|rerank)(\/plan)?\/?(\?|$)/u

/** The body limit of a request's route. */
const bodyLimitFor = (url: string, maxBodyBytes: number): number =>
  internPath.test(url) ? internBodyLimit : modelPath.test(url) ? maxBodyBytes : Math.min(maxBodyBytes, managementBodyLimit)

const isJsonBody = (headers: Readonly<Record<string, string | undefined>>) => {
  const type = headers["content-type"]
  if (type === undefined) return true
  const media = type.toLowerCase().split(";")[0]!.trim()
  return media === "application/json" || media.endsWith("+json")
}
// A batch input file (200 MB, OpenAI's limit) and its form's other parts.
const fileUploadLimit = Batch.limits.bytes + 1024 * 1024
// 200 MB at about 3 Mbit/s: a batch input file is large, and only a body that stalls is refused.
const fileUploadTimeoutMs = 10 * 60 * 1000
// What an upload holds in memory at once: about one chunk of whole lines (batches/FileChunks.ts).
const uploadChunkBytes = 1024 * 1024
const isFileUpload = (request: HttpServerRequest.HttpServerRequest) =>
  request.method === "POST" && /^\/api\/v1\/files\/?(\?|$)/u.test(request.url)

const internCodes: Record<number, string | number> = {
  400: codes.InvalidBody.code,
  401: 401,
  403: 403,
  404: codes.InternNotFound.code,
  405: codes.InternNotFound.code,
  408: codes.InternRequestTimeout.code,
  413: codes.PayloadTooLarge.code,
  415: codes.UnsupportedMediaType.code,
  500: codes.InternalError.code,
  502: codes.UpstreamUnavailable.code,
  503: codes.UpstreamUnavailable.code
}

const messages: Record<number, string> = {
  400: "Invalid request",
  404: "Not found",
  405: "Method not allowed",
  408: "The request timed out",
  413: "Request body too large",
  415: "Unsupported content type: send application/json",
  500: "Internal server error"
}

/** The message of the envelope a bodiless error answer gets (an unmatched route's 404...). */
export const messageFor = (status: number) => messages[status] ?? `HTTP ${status}`

const envelopeBody = (path: string, status: number, message: string) =>
  internPath.test(path)
    ? { error: { code: internCodes[status] ?? (status >= 500 ? "internal_error" : status), message } }
    : { error: { code: status, message } }

export const envelopeFor = (path: string, status: number, message: string) =>
  HttpServerResponse.jsonUnsafe(envelopeBody(path, status, message), { status })

const isJson = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag !== "Empty" && (response.body.contentType ?? "").startsWith("application/json")

export const declaresBody = (headers: Readonly<Record<string, string | undefined>>) =>
  headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0")

// A client that sends its body slower than the limit (or stops) would otherwise hold its
// connection until Node's own 300 s request timeout, which answers without the envelope. The 408
// is written straight to the socket (interrupting the body's reader first would destroy the socket
// before the answer left); once the connection has closed behind it, the deadline wins the race
// with the route, whose fiber is interrupted where it waits for the body: its buffers and timers
// go, and the access log writes the request's line with the 408 then, not at shutdown. Node takes
// a request whose answer has finished off the connection, so nothing else would ever end that
// wait.
const bodyDeadline = (
  request: HttpServerRequest.HttpServerRequest,
  timeoutMs: number
): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined => {
  const source = request.source as Partial<Http.IncomingMessage>
  if (typeof source.complete !== "boolean" || source.complete || !declaresBody(request.headers)) return undefined
  const message = `The request body did not arrive within ${timeoutMs} ms`
  return Effect.callback<HttpServerResponse.HttpServerResponse>((resume) => {
    const socket = source.socket
    const ended = () => resume(Effect.succeed(envelopeFor(request.url, 408, message)))
    const answer = () => {
      if (source.complete) return
      const response = NodeHttpServerRequest.toServerResponse(request) as Http.ServerResponse
      if (response.headersSent || response.writableEnded) return
      const text = JSON.stringify(envelopeBody(request.url, 408, message))
      response.writeHead(408, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
        connection: "close"
      })
      response.end(text)
      // Node ends the connection once the answer is flushed and destroys it shortly after.
      if (socket === undefined || socket.destroyed) return ended()
      socket.once("close", ended)
    }
    const timer = setTimeout(answer, timeoutMs)
    return Effect.sync(() => {
      clearTimeout(timer)
      socket?.off("close", ended)
    })
  })
}

class TooDeep extends Error {
  constructor(at: number) {
    super(`the JSON body nests deeper than ${JsonDepth.maxDepth} levels (at byte ${at})`)
  }
}

// A body nested deeper than JsonDepth.maxDepth is refused from its bytes as they arrive, before
// they become objects and without reading the rest. The readable `NodeHttpIncomingMessage` reads
// a body from (`bodySource`, read only when the route reads the body: after authentication) is
// replaced by one that passes the bytes on after checking them. Refused, the read fails, the rest
// of the body is left unread, and whatever the route made of the failure (the HttpApi routes'
// 400) becomes this 400, which closes the connection.
//
// A small body (declared, at most `smallBody` bytes) is read whole as usual and checked before it
// is decoded as text: piping it through a transform stream costs a lone request about 50 µs (the
// stream's objects and the ticks between them), and reading all of so few bytes costs nothing.
const smallBody = 64 * 1024

/** `request`'s body bytes as read, checked for depth before anything decodes them. */
const readThenChecked = (request: HttpServerRequest.HttpServerRequest, refuse: (error: TooDeep) => void): boolean => {
  let prototype: object | null = Object.getPrototypeOf(request)
  let read: (() => Effect.Effect<ArrayBuffer, unknown>) | undefined
  while (prototype !== null && read === undefined) {
    read = Object.getOwnPropertyDescriptor(prototype, "arrayBuffer")?.get as typeof read
    prototype = Object.getPrototypeOf(prototype)
  }
  if (read === undefined) return false
  let checked: Effect.Effect<ArrayBuffer, unknown> | undefined
  // `text` and `json` read through `arrayBuffer`: every decoding of the body sees the check.
  Object.defineProperty(request, "arrayBuffer", {
    configurable: true,
    get: () =>
      checked ??= read.call(request).pipe(Effect.flatMap((bytes) => {
        const at = JsonDepth.scanner().push(new Uint8Array(bytes))
        if (at === -1) return Effect.succeed(bytes)
        const error = new TooDeep(at)
        refuse(error)
        return Effect.fail(error)
      }))
  })
  return true
}

const depthChecked = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.suspend(() => {
    const source = request.source as Http.IncomingMessage
    if (typeof source.pipe !== "function" || source.readableFlowing !== null || !("bodySource" in request)) return route
    let refusal: TooDeep | undefined
    const refused = () =>
      envelopeFor(request.url, 400, `Invalid request: ${refusal!.message}`).pipe(HttpServerResponse.setHeader("connection", "close"))
    const answered = route.pipe(
      Effect.map((response) => (refusal === undefined ? response : refused())),
      Effect.catchCause((cause) => (refusal === undefined ? Effect.failCause(cause) : Effect.succeed(refused())))
    )
    const declared = request.headers["content-length"]
    if (declared !== undefined && Number(declared) <= smallBody && readThenChecked(request, (error) => (refusal = error))) return answered
    let checked: Stream.Transform | undefined
    Object.defineProperty(request, "bodySource", {
      configurable: true,
      get: () => {
        if (checked !== undefined) return checked
        const scan = JsonDepth.scanner()
        const through: Stream.Transform = new Stream.Transform({
          transform(chunk: Buffer, _encoding, done) {
            const at = scan.push(chunk)
            if (at === -1) return done(null, chunk)
            source.unpipe(through)
            source.pause()
            refusal = new TooDeep(at)
            done(refusal)
          }
        })
        checked = through
        source.pipe(through)
        return through
      }
    })
    return answered
  })

const overBudget = (path: string) =>
  envelopeFor(path, 503, "The gateway holds as many request bytes as its memory allows: retry shortly").pipe(
    HttpServerResponse.setHeader("retry-after", "1")
  )

// The bytes of an answer body made in memory: one array, or parts already made and written one
// by one (a large embeddings answer; its length is declared). Streamed answers of unknown length
// hold their own chunks briefly.
const answerBytes = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array"
    ? response.body.body.byteLength
    : response.body._tag === "Raw"
    ? response.body.contentLength ?? 0
    : 0

export const layer = (options: PolicyOptions) =>
  Layer.unwrap(Effect.gen(function*() {
    const bodyTimeoutMs = options.bodyTimeoutMs ?? (yield* BodyTimeoutConfig)
    const internBodyTimeoutMs = Math.min(bodyTimeoutMs, yield* InternRequestTimeoutConfig)
    const budget = yield* MemoryBudget
    return HttpRouter.middleware((app) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        // The route's kind, read once from the URL: every bound below depends on it.
        const upload = isFileUpload(request)
        const intern = internPath.test(request.url)
        const limit = upload ? Math.max(fileUploadLimit, options.maxBodyBytes) : bodyLimitFor(request.url, options.maxBodyBytes)
        if (/%00/u.test(request.url)) {
          const code = intern ? codes.InvalidRequest.code : 400
          return HttpServerResponse.jsonUnsafe(
            { error: { code, message: "Invalid request: the URL contains an encoded NUL character (%00)" } },
            { status: 400 }
          )
        }
        const declared = request.headers["content-length"]
        if (declared !== undefined && Number(declared) > limit) {
          return envelopeFor(request.url, 413, `Request body exceeds ${limit} bytes`).pipe(
            HttpServerResponse.setHeader("connection", "close")
          )
        }
        yield* HttpEffect.appendPreResponseHandler((req, response) =>
          Effect.succeed(
            response.status >= 400 && !isJson(response)
              ? envelopeFor(req.url, response.status, messageFor(response.status))
              : response
          )
        )
        const hasBody = declaresBody(request.headers)
        // What the request may hold: its declared body (the limit when it streams one undeclared).
        // A file upload is streamed into the store a chunk at a time: it holds about one chunk.
        const held = upload ? uploadChunkBytes : declared !== undefined ? Number(declared) : limit
        const charge = hasBody ? MemoryBudgetModule.chargeFor(held) : 0
        if (charge > 0 && !budget.take(charge)) return overBudget(request.url)
        const served = hasBody && isJsonBody(request.headers) ? depthChecked(request, app) : app
        const route = served.pipe(
          Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit)),
          Effect.provideService(MemoryBudgetModule.RequestCharge, charge)
        )
        const deadline = bodyDeadline(
          request,
          intern ? internBodyTimeoutMs : upload ? Math.max(bodyTimeoutMs, fileUploadTimeoutMs) : bodyTimeoutMs
        )
        const answered = deadline === undefined ? route : Effect.raceFirst(route, deadline)
        if (charge === 0) return yield* answered
        return yield* answered.pipe(
          Effect.tap((response) =>
            Effect.sync(() => {
              // The answer's bytes stay charged until the socket has taken them (or closed).
              const bytes = answerBytes(response)
              const socketSide = NodeHttpServerRequest.toServerResponse(request) as Http.ServerResponse | undefined
              if (bytes === 0 || socketSide?.once === undefined || socketSide.writableFinished || socketSide.destroyed) return
              budget.hold(bytes)
              socketSide.once("close", () => budget.release(bytes))
            })
          ),
          Effect.ensuring(Effect.sync(() => budget.release(charge)))
        )
      }), { global: true })
  })).pipe(Layer.provide(MemoryBudget.layer))
