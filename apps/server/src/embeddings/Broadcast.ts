import type { CallerShape } from "@switchyard/core/api/Authorization"
import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import type { BroadcastDestination } from "@switchyard/core/catalog/Catalog"
import type { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import { knownKeys } from "@switchyard/core/schema/TraceConfig"
import { Clock, Context, Data, Effect, Layer, Queue, Schedule, Semaphore, Tracer } from "effect"
import { HttpClient, HttpClientRequest, HttpTraceContext } from "effect/http"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import type { Served } from "./Embeddings.ts"

export interface ServedEvent {
  readonly request: EmbeddingRequest
  readonly served: Served
  readonly caller: CallerShape
  readonly sessionId: string | undefined
  /** The request's span while tracing is on: deliveries continue its trace. */
  readonly parent?: Tracer.AnySpan | undefined
}

const maxInFlight = 64

/**
 * Whether a destination's answer may change if the delivery is repeated: server errors, 408 and
 * 429 may; any other refusal (400, 401, 404, 413...) would be refused again.
 */
export const isRetryableStatus = (status: number): boolean => status >= 500 || status === 408 || status === 429

class DeliveryRefused extends Data.TaggedError("DeliveryRefused")<{ readonly status: number }> {
  override get message() {
    return `status ${this.status}`
  }
}

// Webhook URLs often carry their token in the query or the user info; logs name the destination
// by origin and path only.
const loggableUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.origin}${parsed.pathname}`
  } catch {
    return "(invalid URL)"
  }
}

const scrubUrl = (text: string, url: string) => text.split(url).join(loggableUrl(url))

/**
 * The event a destination receives. The known trace keys are also the log context of the request;
 * every key of `trace`, known or custom, is passed through.
 */
const eventOf = ({ caller, request, served, sessionId }: ServedEvent, createdAtMs: number) => ({
  type: "embeddings.served",
  generation_id: served.id,
  model: served.model,
  provider: served.provider,
  workspace_id: caller.workspaceId,
  session_id: sessionId ?? null,
  user: request.user ?? null,
  usage: {
    prompt_tokens: served.promptTokens,
    total_tokens: served.totalTokens,
    cost: creditsFromNanos(served.costNanos),
    is_byok: served.isByok
  },
  trace: request.trace ?? {},
  created_at: new Date(createdAtMs).toISOString()
})

/**
 * Delivers served-request events to the configured broadcast destinations in the background:
 * the response never waits for them. Up to 64 events are delivered at once; a delivery that
 * fails on the way, times out or is answered 5xx, 408 or 429 is retried four times with
 * exponential backoff (200 ms, 400 ms, 800 ms, 1.6 s); other refusals are final. Each carries
 * `x-switchyard-event-id` (the generation id) so a destination can drop a repeat. A queue that
 * fills up (destinations down for long) drops the newest events and says so in the log.
 */
export class Broadcast extends Context.Service<Broadcast, {
  /** Queues the event; never waits for its delivery. */
  readonly publish: (event: ServedEvent) => Effect.Effect<void>
}>()("@switchyard/server/embeddings/Broadcast") {
  static readonly layer = Layer.effect(
    Broadcast,
    Effect.gen(function*() {
      const { catalog } = yield* CurrentCatalog
      const destinations = catalog.broadcast
      if (destinations.length === 0) return Broadcast.of({ publish: () => Effect.void })
      const client = yield* HttpClient.HttpClient
      const queue = yield* Queue.dropping<ServedEvent>(10_000)
      const inFlight = yield* Semaphore.make(maxInFlight)
      const scope = yield* Effect.scope
      // With tracing on, a delivery is a client span of the request's trace: `traceparent` names
      // it, and its attributes name the destination by origin and path (the HTTP client's own
      // span would record the whole URL, token included).
      const deliver = (destination: BroadcastDestination, payload: ReturnType<typeof eventOf>, parent: Tracer.AnySpan | undefined) =>
        parent === undefined || !parent.sampled
          ? send(destination, payload, {})
          : Effect.useSpan("Broadcast.deliver", {
            kind: "client",
            parent,
            attributes: { destination: loggableUrl(destination.url), generation_id: payload.generation_id }
          }, (span) =>
            send(destination, payload, span.sampled ? HttpTraceContext.toHeaders(span) : {}).pipe(
              Effect.provideService(Tracer.DisablePropagation, true)
            ))
      const send = (destination: BroadcastDestination, payload: ReturnType<typeof eventOf>, trace: Readonly<Record<string, string>>) =>
        HttpClientRequest.post(destination.url).pipe(
          HttpClientRequest.setHeaders({ ...destination.headers, ...trace, "x-switchyard-event-id": payload.generation_id }),
          HttpClientRequest.bodyJsonUnsafe(payload),
          client.execute,
          Effect.flatMap((response) => response.status < 300 ? Effect.void : Effect.fail(new DeliveryRefused({ status: response.status }))),
          Effect.scoped,
          Effect.timeout(destination.timeout_ms ?? 5_000),
          Effect.retry({
            schedule: Schedule.exponential("200 millis"),
            times: 4,
            while: (error) => !(error instanceof DeliveryRefused) || isRetryableStatus(error.status)
          }),
          Effect.catchCause((cause) =>
            Effect.logWarning("broadcast delivery failed").pipe(
              Effect.annotateLogs({
                destination: loggableUrl(destination.url),
                generation_id: payload.generation_id,
                cause: scrubUrl(String(cause), destination.url)
              })
            )
          )
        )
      yield* Effect.gen(function*() {
        const event = yield* Queue.take(queue)
        yield* Semaphore.take(inFlight, 1)
        const payload = eventOf(event, yield* Clock.currentTimeMillis)
        yield* Effect.forEach(destinations, (d) => deliver(d, payload, event.parent), { concurrency: "unbounded", discard: true }).pipe(
          Effect.ensuring(Semaphore.release(inFlight, 1)),
          Effect.forkIn(scope)
        )
      }).pipe(Effect.forever, Effect.forkScoped)
      return Broadcast.of({
        // The warning is logged by the request's own fiber, through the gateway's logger and level.
        publish: (event) =>
          Effect.suspend(() => {
            if (Queue.offerUnsafe(queue, event)) return Effect.void
            const trace = event.request.trace
            return Effect.logWarning("broadcast queue full: event dropped").pipe(
              Effect.annotateLogs(Object.fromEntries(knownKeys.flatMap((k) => trace?.[k] === undefined ? [] : [[k, trace[k]]])))
            )
          })
      })
    })
  )
}
