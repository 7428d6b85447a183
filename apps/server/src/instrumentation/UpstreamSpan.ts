import type { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect } from "effect"
import * as Span from "./Span.ts"

/**
 * What a failed span says of an upstream failure: OpenTelemetry's `error.type` (the failure's
 * reason, `UpstreamError`'s vocabulary) beside the span's error status, whose message names the
 * provider.
 */
export const failure = (error: unknown): Record<string, unknown> =>
  error instanceof UpstreamError.UpstreamError ? { "error.type": error.reason._tag } : {}

/**
 * An adapter's call to its provider in a span named `name`: the span names the provider
 * (`gen_ai.provider.name`, the connection's slug), and a failure leaves the adapter already
 * naming that provider, with its reason on the span.
 */
export const adapter = (name: string) =>
<A, E, R>(self: Effect.Effect<A, E, R>, connection: EmbeddingProvider.Connection): Effect.Effect<A, E, R> => {
  const provider = connection.provider
  return self.pipe(
    Effect.mapError((error) => provider !== undefined && error instanceof UpstreamError.UpstreamError ? UpstreamError.atProvider(provider)(error) as E : error),
    Effect.tapError((error) => Span.annotate(() => failure(error))),
    Span.within(name, () => provider === undefined ? {} : { "gen_ai.provider.name": provider })
  )
}
