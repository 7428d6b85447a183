import { assert, describe, it } from "@effect/vitest"
import { Context, Effect, Option, References, Tracer } from "effect"
import { HttpClient } from "effect/http"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { connection, overHttp } from "../support/AdapterFixture.ts"
import { request, texts } from "./ProviderHarness.ts"
import * as Cohere from "../../src/providers/Cohere.ts"

// The adapters built from a wire format (WireFormat.make, RerankWire.make) follow the span policy
// of observability/Span.ts: with tracing off the call runs as it is, with no span (not even a
// no-op one) around it; with tracing on it runs in a span named for the provider and the task.

/** The names of the spans the upstream request was sent under, innermost first. */
const recordingClient = (chains: Array<ReadonlyArray<string>>) =>
  Effect.map(HttpClient.HttpClient, (client) =>
    HttpClient.tapRequest(client, () =>
      Effect.withFiber((fiber) => {
        const names: Array<string> = []
        let span: Tracer.AnySpan | undefined = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
        while (span !== undefined && span._tag === "Span") {
          names.push(span.name)
          span = Option.getOrUndefined(span.parent)
        }
        chains.push(names)
        return Effect.void
      })))

const withTracing = (enabled: boolean) => Effect.provideService(References.TracerEnabled, enabled)

describe("a wire format adapter's span", () => {
  for (const enabled of [false, true]) {
    it.live(`embed: ${enabled ? "a span named Cohere.embed with tracing on" : "none with tracing off"}`, () =>
      Effect.gen(function*() {
        const server = yield* FakeUpstream.scoped(() => FakeCohere.start())
        const chains: Array<ReadonlyArray<string>> = []
        const client = yield* recordingClient(chains)
        const adapter = yield* Cohere.make.pipe(Effect.provideService(HttpClient.HttpClient, client))
        const result = yield* adapter.embed(connection(server.url, "co-fake"), request("embed-v4.0", texts("x"), { dimensions: 8 }))
          .pipe(withTracing(enabled))
        assert.strictEqual(result.embeddings.length, 1)
        assert.deepStrictEqual(chains, [enabled ? ["Cohere.embed"] : []])
      }).pipe(overHttp))

    it.live(`rerank: ${enabled ? "a span named Cohere.rerank with tracing on" : "none with tracing off"}`, () =>
      Effect.gen(function*() {
        const server = yield* FakeUpstream.scoped(() => FakeCohere.start())
        const chains: Array<ReadonlyArray<string>> = []
        const client = yield* recordingClient(chains)
        const adapter = yield* Cohere.makeRerank.pipe(Effect.provideService(HttpClient.HttpClient, client))
        const result = yield* adapter.rerank(connection(server.url, "co-fake"), {
          upstreamModel: "rerank-v3.5",
          query: "rivers",
          documents: [{ text: "deltas" }, { text: "bread" }]
        }).pipe(withTracing(enabled))
        assert.strictEqual(result.scores.length, 2)
        assert.deepStrictEqual(chains, [enabled ? ["Cohere.rerank"] : []])
      }).pipe(overHttp))
  }
})
