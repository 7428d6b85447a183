import { assert, describe, it } from "@effect/vitest"
import { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as AdapterFixture from "../support/AdapterFixture.ts"

export { connection, httpClient, overHttp } from "../support/AdapterFixture.ts"

export const fixture = (path: string): string =>
  Fs.readFileSync(new URL(`../fixtures/upstream/${path}`, import.meta.url), "utf8")

export const fixtureJson = (path: string): unknown => JSON.parse(fixture(path))

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

// The reason as plain data, comparable with an object literal.
export const reasonOf = <A, R>(effect: Effect.Effect<A, UpstreamError.UpstreamError, R>) =>
  effect.pipe(Effect.flip, Effect.map((error) => ({ ...error.reason })))

export const lastBody = (server: FakeUpstream.FakeServer): Record<string, unknown> => {
  const last = server.requests[server.requests.length - 1]
  assert.isDefined(last)
  return last!.body as Record<string, unknown>
}

const closedPort = () =>
  Effect.promise(() =>
    new Promise<number>((resolve) => {
      const server = Http.createServer()
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        server.close(() => resolve(port))
      })
    })
  )

export interface Subject<FakeOptions> extends AdapterFixture.Subject<FakeOptions> {
  readonly name: string
  readonly model: string
  readonly input: EmbeddingProvider.EmbeddingInput
}

// Every wire format must map the same transport and response failures to the same reasons.
export const describeFailureModes = <FakeOptions>(subject: Subject<FakeOptions>) =>
  describe(`${subject.name} failure modes`, () => {
    const against = AdapterFixture.make(subject)

    const setup = (behaviour: FakeUpstream.Behaviour | ReadonlyArray<FakeUpstream.Behaviour>, timeoutMs = 5_000) =>
      Effect.gen(function*() {
        const fixture = yield* against({ timeoutMs })
        fixture.server.setBehaviour(behaviour)
        return fixture
      })

    const run = (
      behaviour: FakeUpstream.Behaviour | ReadonlyArray<FakeUpstream.Behaviour>,
      options: { readonly timeoutMs?: number; readonly dimensions?: number } = {}
    ) =>
      Effect.gen(function*() {
        const { embed } = yield* setup(behaviour, options.timeoutMs)
        const extra = options.dimensions === undefined ? {} : { dimensions: options.dimensions }
        return yield* reasonOf(embed(request(subject.model, subject.input, extra)))
      })

    it.live("5xx becomes its reason with the status and the provider's message", () =>
      Effect.gen(function*() {
        const unavailable = yield* run({ _tag: "Status", status: 503 })
        assert.strictEqual(unavailable._tag, "Unavailable")
        if (unavailable._tag !== "Unavailable") return
        assert.strictEqual(unavailable.upstream_status, 503)
        const failed = yield* run({ _tag: "Status", status: 500 })
        assert.strictEqual(failed._tag, "ServerError")
        if (failed._tag !== "ServerError") return
        assert.strictEqual(failed.upstream_status, 500)
        assert.strictEqual(failed.provider_message, "fake failure 500")
      }).pipe(AdapterFixture.overHttp))

    it.live("429 carries Retry-After in milliseconds", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "RateLimited", retryAfter: "3" })
        assert.strictEqual(reason._tag, "RateLimited")
        if (reason._tag !== "RateLimited") return
        assert.strictEqual(reason.upstream_status, 429)
        assert.strictEqual(reason.retry_after_ms, 3000)
      }).pipe(AdapterFixture.overHttp))

    it.live("an HTTP-date Retry-After is relative to now", () =>
      Effect.gen(function*() {
        const at = new Date(Date.now() + 60_000).toUTCString()
        const reason = yield* run({ _tag: "Status", status: 503, headers: { "retry-after": at } })
        assert.strictEqual(reason._tag, "Unavailable")
        if (reason._tag !== "Unavailable") return
        assert.isDefined(reason.retry_after_ms)
        assert.isAtLeast(reason.retry_after_ms!, 55_000)
        assert.isAtMost(reason.retry_after_ms!, 60_000)
      }).pipe(AdapterFixture.overHttp))

    it.live("a wrong key is the provider's auth status", () =>
      Effect.gen(function*() {
        const { embed } = yield* against({ apiKey: "wrong-key" })
        const reason = yield* reasonOf(embed(request(subject.model, subject.input)))
        assert.oneOf(reason._tag, ["AuthFailed", "InvalidRequest"])
        assert.oneOf((reason as { readonly upstream_status?: number }).upstream_status, [400, 401, 403])
        assert.notInclude(JSON.stringify(reason), "wrong-key")
      }).pipe(AdapterFixture.overHttp))

    it.live("no answer within the time limit is Timeout", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Hang" }, { timeoutMs: 300 })
        assert.deepStrictEqual(reason, { ...UpstreamError.timeout(300).reason })
      }).pipe(AdapterFixture.overHttp))

    it.live("a body too slow to arrive is Timeout", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "SlowBody", chunkDelayMs: 150 }, { timeoutMs: 400 })
        assert.deepStrictEqual(reason, { ...UpstreamError.timeout(400).reason })
      }).pipe(AdapterFixture.overHttp))

    it.live("a delay within the time limit still succeeds", () =>
      Effect.gen(function*() {
        const { embed, server } = yield* setup({ _tag: "Delay", ms: 150 }, 3_000)
        const result = yield* embed(request(subject.model, subject.input))
        assert.strictEqual(result.embeddings.length, EmbeddingProvider.inputCount(subject.input))
        assert.strictEqual(server.requests.length, 1)
      }).pipe(AdapterFixture.overHttp))

    it.live("a connection reset before the answer is ConnectionLost", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Reset" })
        assert.strictEqual(reason._tag, "ConnectionLost")
      }).pipe(AdapterFixture.overHttp))

    it.live("a body cut short by a closed connection is ConnectionLost", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Truncated" })
        assert.strictEqual(reason._tag, "ConnectionLost")
      }).pipe(AdapterFixture.overHttp))

    it.live("malformed JSON is InvalidResponse", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "MalformedJson" })
        assert.deepStrictEqual(reason, { ...UpstreamError.invalidResponse("the response body is not JSON").reason })
      }).pipe(AdapterFixture.overHttp))

    it.live("a 2xx body of the wrong shape is InvalidResponse", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "Status", status: 200, body: JSON.stringify({ unexpected: true }) })
        assert.strictEqual(reason._tag, "InvalidResponse")
      }).pipe(AdapterFixture.overHttp))

    it.live("one vector too few is InvalidResponse", () =>
      Effect.gen(function*() {
        const reason = yield* run({ _tag: "WrongCount" })
        assert.strictEqual(reason._tag, "InvalidResponse")
        if (reason._tag !== "InvalidResponse") return
        assert.include(reason.detail, "expected")
      }).pipe(AdapterFixture.overHttp))

    it.live("a closed port is Unreachable", () =>
      Effect.gen(function*() {
        const port = yield* closedPort()
        const provider = yield* subject.make
        const conn = AdapterFixture.connection(`http://127.0.0.1:${port}/v1`, subject.apiKey)
        const reason = yield* reasonOf(provider.embed(conn, request(subject.model, subject.input)))
        assert.strictEqual(reason._tag, "Unreachable")
      }).pipe(Effect.provide(AdapterFixture.httpClient)))

    it.live("a per-request failure is followed by a normal answer", () =>
      Effect.gen(function*() {
        const { embed, server } = yield* setup([{ _tag: "Status", status: 500 }])
        const first = yield* reasonOf(embed(request(subject.model, subject.input)))
        assert.strictEqual(first._tag, "ServerError")
        const second = yield* embed(request(subject.model, subject.input))
        assert.strictEqual(second.embeddings.length, EmbeddingProvider.inputCount(subject.input))
        assert.strictEqual(server.requests.length, 2)
        assert.deepStrictEqual(server.requests[0]!.body, server.requests[1]!.body)
      }).pipe(AdapterFixture.overHttp))
  })
