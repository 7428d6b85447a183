import type { EmbeddingProvider } from "@switchyard/core"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import type * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Redacted, type Scope } from "effect"
import type { HttpClient } from "effect/http"
import * as UpstreamHttp from "../../src/providers/UpstreamHttp.ts"
import * as HeldAttempts from "../../src/pipeline/HeldAttempts.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"

/**
 * The real HTTP client the adapters use in production, over undici.
 */
export const httpClient = UpstreamHttp.clientLayer

/**
 * Runs a test's effect the way every adapter test needs it: in its own scope (the fake upstream
 * closes at the end) with the real HTTP client.
 */
export const overHttp = <A, E>(effect: Effect.Effect<A, E, HttpClient.HttpClient | Scope.Scope>) =>
  effect.pipe(Effect.scoped, Effect.provide(httpClient))

export const connection = (
  baseUrl: string,
  apiKey: string | undefined,
  dialect?: Catalog.Dialect
): EmbeddingProvider.Connection => ({
  baseUrl,
  apiKey: apiKey === undefined ? undefined : Redacted.make(apiKey),
  ...(dialect !== undefined ? { dialect } : {})
})

type Provider = EmbeddingProvider.EmbeddingProvider["Service"]

/**
 * An adapter and the fake that plays its provider.
 */
export interface Subject<FakeOptions> {
  readonly start: (options?: FakeOptions) => Promise<FakeUpstream.FakeServer>
  readonly make: Effect.Effect<Provider, never, HttpClient.HttpClient>
  readonly apiKey: string
}

/**
 * What one test may change: the fake's options, another build of the adapter, the key sent and
 * the time limit.
 */
export interface Options<FakeOptions> {
  readonly fake?: FakeOptions
  readonly make?: Effect.Effect<Provider, never, HttpClient.HttpClient>
  readonly apiKey?: string
  readonly timeoutMs?: number
  /** The catalog's dialect of an OpenAI-compatible provider. */
  readonly dialect?: Catalog.Dialect
}

/**
 * A started fake upstream, the adapter and a connection to the fake; `embed` sends one request
 * over that connection.
 */
export interface Fixture {
  readonly server: FakeUpstream.FakeServer
  readonly provider: Provider
  readonly connection: EmbeddingProvider.Connection
  readonly embed: (
    request: EmbeddingProvider.UpstreamRequest
  ) => Effect.Effect<EmbeddingProvider.EmbeddingResult, UpstreamError.UpstreamError>
}

/**
 * Starts the subject's fake for the current scope and points the adapter at it.
 */
export const make = <FakeOptions>(subject: Subject<FakeOptions>) =>
(options: Options<FakeOptions> = {}): Effect.Effect<Fixture, never, HttpClient.HttpClient | Scope.Scope> =>
  Effect.gen(function*() {
    const server = yield* FakeUpstream.scoped(() => subject.start(options.fake))
    const provider = yield* (options.make ?? subject.make)
    const conn = connection(server.url, options.apiKey ?? subject.apiKey, options.dialect)
    // Within the time limit, as the gateway runs every upstream call.
    const embed = (request: EmbeddingProvider.UpstreamRequest) =>
      HeldAttempts.bounded(provider.embed(conn, request), options.timeoutMs ?? 5_000)
    return { server, provider, connection: conn, embed }
  })
