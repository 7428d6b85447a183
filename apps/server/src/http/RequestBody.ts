import { limits } from "@switchyard/core/schema/Intern"
import * as Batch from "@switchyard/core/schema/Batch"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Config, Context, Effect, Layer } from "effect"
import * as ByteSize from "effect/ByteSize"
import { HttpIncomingMessage, HttpServerRequest, HttpServerResponse } from "effect/http"
import type * as Http from "node:http"
import * as Stream from "node:stream"
import * as ClientErrors from "./ClientErrors.ts"
import type * as FairShare from "./FairShare.ts"
import * as JsonDepth from "./JsonDepth.ts"
import { MemoryBudget, type MemoryRefused } from "./MemoryBudget.ts"
import * as MemoryBudgetModule from "./MemoryBudget.ts"
import { envelopeBody, envelopeFor } from "./Policies.ts"

/**
 * A request's body, admitted once its key is known (the authorization middleware calls
 * {@link RequestBodies}' `admitted` after the credential check, before the route reads anything):
 * a body limit sized to what the route takes (the configurable one for the model routes, which
 * take batches; the spec's 1 MiB for interns; 256 KiB for management routes), the memory budget
 * of the bytes in flight charged to the request's workspace and key (MemoryBudget.ts, shared
 * fairly under contention), a bound on JSON nesting checked on the bytes before they become
 * objects, and a time limit on receiving the body (`SWITCHYARD_BODY_TIMEOUT_MS`, default 60 s).
 *
 * Whatever the request holds (its charge, the body's reader, its timers) is released when its
 * answer is decided: the route answers (a 401, 403, 413 or 400 given while the body still
 * streams included), the body turns out malformed (Node's parser answers it, ClientErrors.ts),
 * the client goes away, or the body deadline or a fair-share cut answers it first. All of it
 * runs inside the route, which the router makes interruptible: a client that goes away
 * interrupts it at once.
 */
export interface BodyOptions {
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

/** Whether `request` was answered in its route's place, or its client has gone. */
const answeredAlready = (request: HttpServerRequest.HttpServerRequest): boolean => {
  const source = request.source as Partial<Http.IncomingMessage>
  const socketSide = NodeHttpServerRequest.toServerResponse(request) as Http.ServerResponse | undefined
  return source.destroyed === true || source.socket?.destroyed === true || ClientErrors.parserAnswer(socketSide) !== undefined
}

export const declaresBody = (headers: Readonly<Record<string, string | undefined>>) =>
  headers["transfer-encoding"] !== undefined || (headers["content-length"] !== undefined && headers["content-length"] !== "0")

const memoryBusyBody = (path: string, refused: MemoryRefused) =>
  envelopeBody(path, 503, refused.message, {
    reason: "memory_busy",
    retryable: true,
    retry_after: 1,
    ...(refused.reason === "share" ? { share_percent: refused.sharePercent, share_bytes: refused.shareBytes } : {})
  })

const memoryBusy = (path: string, refused: MemoryRefused) =>
  HttpServerResponse.jsonUnsafe(memoryBusyBody(path, refused), { status: 503, headers: { "retry-after": "1" } })

/**
 * An answer the route did not give, written straight to the socket while the body still arrives:
 * the body deadline's 408, or a fair-share cut's 503. Interrupting the body's reader first would
 * destroy the socket before the answer left, so the answer goes first; once the connection has
 * closed behind it, this wins the race with the route, whose fiber is interrupted where it waits
 * for the body: its charge, buffers and timers go, and the access log writes the request's line
 * then. Node takes a request whose answer has finished off the connection, so nothing else would
 * ever end that wait.
 */
const earlyAnswers = (
  request: HttpServerRequest.HttpServerRequest,
  timeoutMs: number,
  cuttable: (cut: (refused: MemoryRefused) => boolean) => () => void
): Effect.Effect<HttpServerResponse.HttpServerResponse> | undefined => {
  const source = request.source as Partial<Http.IncomingMessage>
  if (typeof source.complete !== "boolean" || source.complete || !declaresBody(request.headers)) return undefined
  return Effect.callback<HttpServerResponse.HttpServerResponse>((resume) => {
    const socket = source.socket
    let given: HttpServerResponse.HttpServerResponse | undefined
    const ended = () => resume(Effect.succeed(given!))
    const answer = (status: number, body: unknown, headers: Record<string, string>, response: HttpServerResponse.HttpServerResponse) => {
      if (source.complete || given !== undefined) return false
      const socketSide = NodeHttpServerRequest.toServerResponse(request) as Http.ServerResponse
      if (socketSide.headersSent || socketSide.writableEnded) return false
      given = response
      const text = JSON.stringify(body)
      socketSide.writeHead(status, {
        "content-type": "application/json",
        "content-length": String(Buffer.byteLength(text)),
        ...headers,
        connection: "close"
      })
      socketSide.end(text)
      // Node ends the connection once the answer is flushed and destroys it shortly after.
      if (socket === undefined || socket.destroyed) ended()
      else socket.once("close", ended)
      return true
    }
    const message = `The request body did not arrive within ${timeoutMs} ms`
    const timer = setTimeout(() => answer(408, envelopeBody(request.url, 408, message), {}, envelopeFor(request.url, 408, message)), timeoutMs)
    const uncut = cuttable((refused) =>
      answer(503, memoryBusyBody(request.url, refused), { "retry-after": "1" }, memoryBusy(request.url, refused))
    )
    return Effect.sync(() => {
      clearTimeout(timer)
      uncut()
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

/**
 * The checking stream between the request and its reader. `pipe` carries data, not an end that
 * is not one: when the request is destroyed before its body is complete (the client went away,
 * Node's parser refused the rest of a chunked body) the reader would wait on this stream for ever,
 * so it is destroyed with the request.
 */
const checkingStream = (source: Http.IncomingMessage, refuse: (error: TooDeep) => void): Stream.Transform => {
  const scan = JsonDepth.scanner()
  const through: Stream.Transform = new Stream.Transform({
    transform(chunk: Buffer, _encoding, done) {
      const at = scan.push(chunk)
      if (at === -1) return done(null, chunk)
      source.unpipe(through)
      source.pause()
      const error = new TooDeep(at)
      refuse(error)
      done(error)
    }
  })
  const cutOff = () => {
    if (!source.complete) through.destroy(new Error("The request ended before its body was complete"))
  }
  if (source.destroyed) cutOff()
  else source.once("close", cutOff)
  through.once("close", () => source.off("close", cutOff))
  source.pipe(through)
  return through
}

const depthChecked = <E, R>(
  request: HttpServerRequest.HttpServerRequest,
  route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) =>
  Effect.suspend(() => {
    const source = request.source as Http.IncomingMessage
    if (typeof source.pipe !== "function" || source.readableFlowing !== null || !("bodySource" in request)) return route
    let refusal: TooDeep | undefined
    const refuse = (error: TooDeep) => (refusal = error)
    const refused = () =>
      envelopeFor(request.url, 400, `Invalid request: ${refusal!.message}`).pipe(HttpServerResponse.setHeader("connection", "close"))
    const answered = route.pipe(
      Effect.map((response) => (refusal === undefined ? response : refused())),
      Effect.catchCause((cause) => (refusal === undefined ? Effect.failCause(cause) : Effect.succeed(refused())))
    )
    const declared = request.headers["content-length"]
    if (declared !== undefined && Number(declared) <= smallBody && readThenChecked(request, refuse)) return answered
    let checked: Stream.Transform | undefined
    Object.defineProperty(request, "bodySource", {
      configurable: true,
      get: () => (checked ??= checkingStream(source, refuse))
    })
    return answered
  })

// The bytes of an answer body made in memory: one array, or parts already made and written one
// by one (a large embeddings answer; its length is declared). Streamed answers of unknown length
// hold their own chunks briefly.
const answerBytes = (response: HttpServerResponse.HttpServerResponse) =>
  response.body._tag === "Uint8Array"
    ? response.body.body.byteLength
    : response.body._tag === "Raw"
    ? response.body.contentLength ?? 0
    : 0

/** The request's route, with its body admitted for `owner` (see the module's comment). */
type Admit = <E, R>(
  owner: FairShare.Owner,
  route: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>
) => Effect.Effect<HttpServerResponse.HttpServerResponse, E, R | HttpServerRequest.HttpServerRequest>

export class RequestBodies extends Context.Service<RequestBodies, { readonly admitted: Admit }>()(
  "@switchyard/server/http/RequestBody/RequestBodies"
) {
  static readonly layer = (options: BodyOptions) =>
    Layer.effect(
      RequestBodies,
      Effect.gen(function*() {
        const bodyTimeoutMs = options.bodyTimeoutMs ?? (yield* BodyTimeoutConfig)
        const internBodyTimeoutMs = Math.min(bodyTimeoutMs, yield* InternRequestTimeoutConfig)
        const budget = yield* MemoryBudget
        const admitted: Admit = (owner, route) =>
          Effect.gen(function*() {
            const request = yield* HttpServerRequest.HttpServerRequest
            // The route's kind, read once from the URL: every bound below depends on it.
            const upload = isFileUpload(request)
            const intern = internPath.test(request.url)
            const limit = upload ? Math.max(fileUploadLimit, options.maxBodyBytes) : bodyLimitFor(request.url, options.maxBodyBytes)
            const declared = request.headers["content-length"]
            if (declared !== undefined && Number(declared) > limit) {
              return envelopeFor(request.url, 413, `Request body exceeds ${limit} bytes`).pipe(
                HttpServerResponse.setHeader("connection", "close")
              )
            }
            const limited = route.pipe(Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(limit)))
            if (!declaresBody(request.headers)) return yield* limited
            // Answered already (Node's parser refused the rest of the body, or the client left):
            // nothing is taken for a request nobody waits for; its fiber ends here.
            if (answeredAlready(request)) return yield* Effect.interrupt
            const timeoutMs = intern ? internBodyTimeoutMs : upload ? Math.max(bodyTimeoutMs, fileUploadTimeoutMs) : bodyTimeoutMs
            // What the request may hold: its declared body (the limit when it streams one undeclared).
            // A file upload is streamed into the store a chunk at a time: it holds about one chunk.
            const charge = MemoryBudgetModule.chargeFor(upload ? uploadChunkBytes : declared !== undefined ? Number(declared) : limit)
            const taken = yield* Effect.result(budget.acquire(owner, charge, { waitMs: timeoutMs }))
            if (taken._tag === "Failure") return memoryBusy(request.url, taken.failure)
            const served = isJsonBody(request.headers) ? depthChecked(request, limited) : limited
            const charged = served.pipe(Effect.provideService(MemoryBudgetModule.RequestCharge, charge))
            const early = earlyAnswers(request, timeoutMs, (cut) => budget.cuttable(owner, charge, cut))
            return yield* (early === undefined ? charged : Effect.raceFirst(charged, early)).pipe(
              Effect.tap((response) =>
                Effect.sync(() => {
                  // The answer's bytes stay charged until the socket has taken them (or closed).
                  const bytes = answerBytes(response)
                  const socketSide = NodeHttpServerRequest.toServerResponse(request) as Http.ServerResponse | undefined
                  if (bytes === 0 || socketSide?.once === undefined || socketSide.writableFinished || socketSide.destroyed) return
                  budget.hold(owner, bytes)
                  socketSide.once("close", () => budget.release(owner, bytes))
                })
              ),
              Effect.ensuring(Effect.sync(() => budget.release(owner, charge)))
            )
          })
        return RequestBodies.of({ admitted })
      })
    ).pipe(Layer.provide(MemoryBudget.layer))
}
