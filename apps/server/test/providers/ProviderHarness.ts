import { NodeHttpClient } from "@effect/platform-node"
import { assert, describe, it } from "@effect/vitest"
import { EmbeddingProvider } from "@switchyard/core"
import { Effect, Redacted } from "effect"
import type { HttpClient } from "effect/http"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"

export const httpClient = NodeHttpClient.layerUndici

export const fixture = (path: string): string =>
  Fs.readFileSync(new URL(`../fixtures/upstream/${path}`, import.meta.url), "utf8")

export const fixtureJson = (path: string): unknown => JSON.parse(fixture(path))

export const connection = (
  baseUrl: string,
  apiKey: string | undefined,
  timeoutMs = 5_000
): EmbeddingProvider.Connection => ({
  baseUrl,
  apiKey: apiKey === undefined ? undefined : Redacted.make(apiKey),
  timeoutMs
})

export const texts = (...texts: ReadonlyArray<string>): EmbeddingProvider.EmbeddingInput => ({ _tag: "Texts", texts })

export const tokens = (...tokens: ReadonlyArray<ReadonlyArray<number>>): EmbeddingProvider.EmbeddingInput => ({
  _tag: "Tokens",
  tokens
})

export const items = (
  ...items: ReadonlyArray<ReadonlyArray<EmbeddingProvider.ContentPart>>
): EmbeddingProvider.EmbeddingInput => ({ _tag: "Multimodal", items })

export const text = (text: string): EmbeddingProvider.ContentPart => ({ type: "text", text })
export const image = (url: string): EmbeddingProvider.ContentPart => ({ type: "image_url", image_url: { url } })
export const audio = (data: string, format?: string): EmbeddingProvider.ContentPart => ({
  type: "input_audio",
  input_audio: format === undefined ? { data } : { data, format }
})
export const video = (data: string, format?: string): EmbeddingProvider.ContentPart => ({
  type: "input_video",
  input_video: format === undefined ? { data } : { data, format }
})
export const file = (data: string, format?: string): EmbeddingProvider.ContentPart => ({
  type: "input_file",
  input_file: format === undefined ? { data } : { data, format }
})

export const pngDataUrl = "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="

export const request = (
  upstreamModel: string,
  input: EmbeddingProvider.EmbeddingInput,
  extra: Partial<Omit<EmbeddingProvider.UpstreamRequest, "upstreamModel" | "input">> = {}
): EmbeddingProvider.UpstreamRequest => ({ upstreamModel, input, encodingFormat: "float", ...extra })

export const reasonOf = <A, R>(effect: Effect.Effect<A, EmbeddingProvider.UpstreamError, R>) =>
  effect.pipe(Effect.flip, Effect.map((error) => error.reason))

export const lastBody = (server: FakeUpstream.FakeServer): Record<string, unknown> => {
  const last = server.requests[server.requests.length - 1]
  assert.isDefined(last)
  return last!.body as Record<string, unknown>
}

export const closedPort = () =>
  Effect.promise(() =>
    new Promise<number>((resolve) => {
      const server = Http.createServer()
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
  )

export interface Subject {
  readonly name: string
  readonly start: () => Promise<FakeUpstream.FakeServer>
  readonly apiKey: string
  readonly make: Effect.Effect<EmbeddingProvider.EmbeddingProvider["Service"], never, HttpClient.HttpClient>
  readonly model: string
  readonly input: EmbeddingProvider.EmbeddingInput
  readonly baseUrlOf?: (url: string) => string
}

// Every wire format must map the same transport and response failures to the same reasons.
export const describeFailureModes = (subject: Subject) =>
  describe(`${subject.name} failure modes`, () => {
    const setup = (behaviour: FakeUpstream.Behaviour | ReadonlyArray<FakeUpstream.Behaviour>, timeoutMs = 5_000) =>
      Effect.gen(function*() {
        const server = yield* FakeUpstream.scoped(subject.start)
        server.setBehaviour(behaviour)
        const provider = yield* subject.make
        const conn = connection((subject.baseUrlOf ?? ((url) => url))(server.url), subject.apiKey, timeoutMs)
        return { server, provider, conn }
      })

    const run = (
      behaviour: FakeUpstream.Behaviour | ReadonlyArray<FakeUpstream.Behaviour>,
      options: { readonly timeoutMs?: number; readonly dimensions?: number } = {}
    ) =>
      Effect.gen(function*() {
        const { provider, conn } = yield* setup(behaviour, options.timeoutMs)
        const extra = options.dimensions === undefined ? {} : { dimensions: options.dimensions }
        return yield* reasonOf(provider.embed(conn, request(subject.model, subject.input, extra)))
      })

    it.live("5xx becomes HttpStatus with the body and the provider's message", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Status", status: 503 })
        assert.strictEqual(reason._tag, "HttpStatus")
        if (reason._tag !== "HttpStatus") return
        assert.strictEqual(reason.status, 503)
        assert.include(reason.body, "fake failure 503")
        assert.strictEqual(reason.message, "fake failure 503")
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("429 carries Retry-After in milliseconds", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "RateLimited", retryAfter: "3" })
        assert.strictEqual(reason._tag, "HttpStatus")
        if (reason._tag !== "HttpStatus") return
        assert.strictEqual(reason.status, 429)
        assert.strictEqual(reason.retryAfterMs, 3000)
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("an HTTP-date Retry-After is relative to now", () =>
      Effect.gen(function*() {
        const at = new Date(Date.now() + 60_000).toUTCString()
        const reason = yield* run({ _tag: "Status", status: 503, headers: { "retry-after": at } })
        assert.strictEqual(reason._tag, "HttpStatus")
        if (reason._tag !== "HttpStatus") return
        assert.isDefined(reason.retryAfterMs)
        assert.isAtLeast(reason.retryAfterMs!, 55_000)
        assert.isAtMost(reason.retryAfterMs!, 60_000)
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("a wrong key is the provider's auth status", () =>
      Effect.gen(function*() {
        const server = yield* FakeUpstream.scoped(subject.start)
        const provider = yield* subject.make
        const conn = connection((subject.baseUrlOf ?? ((url) => url))(server.url), "wrong-key")
        const reason = yield* reasonOf(provider.embed(conn, request(subject.model, subject.input)))
        assert.strictEqual(reason._tag, "HttpStatus")
        if (reason._tag !== "HttpStatus") return
        assert.oneOf(reason.status, [400, 401, 403])
        assert.notInclude(JSON.stringify(reason), "wrong-key")
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("no answer within the time limit is Timeout", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Hang" }, { timeoutMs: 300 })
        assert.deepStrictEqual(reason, EmbeddingProvider.Timeout.make({ timeoutMs: 300 }))
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("a body too slow to arrive is Timeout", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "SlowBody", chunkDelayMs: 150 }, { timeoutMs: 400 })
        assert.deepStrictEqual(reason, EmbeddingProvider.Timeout.make({ timeoutMs: 400 }))
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("a delay within the time limit still succeeds", () =>
      Effect.gen(function*() {
        const { provider, conn, server } = yield* setup({ _tag: "Delay", ms: 150 }, 3_000)
        const result = yield* provider.embed(conn, request(subject.model, subject.input))
        assert.strictEqual(result.embeddings.length, EmbeddingProvider.inputCount(subject.input))
        assert.strictEqual(server.requests.length, 1)
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("a connection reset before the answer is ConnectionReset", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Reset" })
        assert.strictEqual(reason._tag, "ConnectionReset")
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("a body cut short by a closed connection is ConnectionReset", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Truncated" })
        assert.strictEqual(reason._tag, "ConnectionReset")
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("malformed JSON is InvalidResponse", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "MalformedJson" })
        assert.deepStrictEqual(reason, EmbeddingProvider.InvalidResponse.make({ detail: "the response body is not JSON" }))
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("a 2xx body of the wrong shape is InvalidResponse", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Status", status: 200, body: JSON.stringify({ unexpected: true }) })
        assert.strictEqual(reason._tag, "InvalidResponse")
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("one vector too few is InvalidResponse", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "WrongCount" })
        assert.strictEqual(reason._tag, "InvalidResponse")
        if (reason._tag !== "InvalidResponse") return
        assert.include(reason.detail, "expected")
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("vectors wider than the requested dimensions are WidthMismatch", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "WrongWidth", width: 12 }, { dimensions: 8 })
        assert.deepStrictEqual(reason, EmbeddingProvider.WidthMismatch.make({ expected: 8, got: 12 }))
      }).pipe(Effect.scoped, Effect.provide(httpClient)))

    it.live("a closed port is Unreachable", () =>
      Effect.gen(function*() {
        const port = yield* closedPort()
        const provider = yield* subject.make
        const url = (subject.baseUrlOf ?? ((u) => u))(`http://127.0.0.1:${port}/v1`)
        const reason = yield* reasonOf(provider.embed(connection(url, subject.apiKey), request(subject.model, subject.input)))
        assert.strictEqual(reason._tag, "Unreachable")
      }).pipe(Effect.provide(httpClient)))

    it.live("a per-request failure is followed by a normal answer", () =>
      Effect.gen(function*() {
        const { provider, conn, server } = yield* setup([{ _tag: "Status", status: 500 }])
        const first = yield* reasonOf(provider.embed(conn, request(subject.model, subject.input)))
        assert.strictEqual(first._tag, "HttpStatus")
        const second = yield* provider.embed(conn, request(subject.model, subject.input))
        assert.strictEqual(second.embeddings.length, EmbeddingProvider.inputCount(subject.input))
        assert.strictEqual(server.requests.length, 2)
        assert.deepStrictEqual(server.requests[0]!.body, server.requests[1]!.body)
      }).pipe(Effect.scoped, Effect.provide(httpClient)))
  })
