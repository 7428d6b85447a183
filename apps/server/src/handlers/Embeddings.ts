import { Api } from "@switchyard/core/api/Api"
import type { Caller, CallerShape } from "@switchyard/core/api/Authorization"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import * as ModelListing from "@switchyard/core/catalog/ModelListing"
import * as Money from "@switchyard/core/catalog/Money"
import { type ApiError, BadRequest } from "@switchyard/core/errors/ApiError"
import type { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
import { Effect, Option, Result, Tracer } from "effect"
import { HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import * as DedicatedRoute from "../http/DedicatedRoute.ts"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { type CallOptions, Embeddings, type Served } from "../embeddings/Embeddings.ts"
import { Broadcast } from "../embeddings/Broadcast.ts"
import * as TraceContext from "../pipeline/TraceContext.ts"
import * as GatewayLogger from "../observability/GatewayLogger.ts"
import { ForwardedVector } from "../providers/VectorEncoding.ts"
import {
  answerCall,
  answerPlan,
  explainHeader,
  ignoredParameters,
  noteSession,
  planReport,
  report,
  type RequestHeaders,
  requireStandardKey,
  resolveModel,
  seedHeader,
  seedOf,
  sessionIdOf,
  truthy
} from "./ModelCall.ts"

/**
 * Reads the per-request options the headers carry: the draw's seed, whether to explain the route,
 * and the session id (the body's `session_id` wins over `x-session-id`).
 */
const requestOptions = (payload: EmbeddingRequest, headers: RequestHeaders) =>
  Effect.gen(function*() {
    const seed = yield* seedOf(headers)
    const cache = CachePolicy.directive(headers[CachePolicy.header])
    if (Result.isFailure(cache)) {
      return yield* new BadRequest({ message: cache.failure, metadata: { field: CachePolicy.header } })
    }
    return {
      options: { seed, cache: cache.success } satisfies CallOptions,
      explain: truthy(headers[explainHeader]),
      sessionId: yield* sessionIdOf(payload, headers)
    }
  })

/**
 * An embeddings call from an authenticated caller to the bytes and headers of its answer, given
 * the services it uses once: the one place the route's logic lives, whatever HTTP layer carries it.
 */
const serveWith = (embeddings: Embeddings["Service"], broadcast: Broadcast["Service"]) =>
  Effect.fnUntraced(function*(caller: CallerShape, payload: EmbeddingRequest, headers: RequestHeaders) {
    const { options, explain, sessionId } = yield* requestOptions(payload, headers)
    yield* noteSession(sessionId, payload.user)
    return yield* Effect.gen(function*() {
      const served = yield* embeddings.create(caller, payload, options).pipe(answerCall("embeddings", payload.model))
      const parent = Option.getOrUndefined(yield* Effect.serviceOption(Tracer.ParentSpan))
      yield* broadcast.publish({ request: payload, served, caller, sessionId, parent })
      yield* GatewayLogger.debug("embeddings served", () => ({
        generation_id: served.id,
        endpoint: served.endpoint,
        prompt_tokens: served.promptTokens,
        attempts: served.attempts.length
      }))
      return {
        body: body(served, payload, explain),
        headers: {
          "x-generation-id": served.id,
          "x-switchyard-provider": served.provider,
          [CachePolicy.header]: served.cache.outcome,
          "x-switchyard-cached-items": String(served.cache.items),
          [seedHeader]: String(served.plan.seed)
        }
      }
    }).pipe(TraceContext.within(TraceContext.annotationsOf(payload, sessionId)))
  })


const modalityDetails = (served: Served) => {
  const tokens = served.modalityTokens
  if (tokens === undefined) return undefined
  const details = Object.fromEntries(Object.entries(tokens).filter(([, n]) => typeof n === "number" && n > 0))
  return Object.keys(details).length === 0 ? undefined : details
}

/**
 * The response body as bytes: vectors forwarded from the upstream are copied in as the upstream
 * wrote them, other vectors are serialised once; nothing passes through a schema.
 */
export const body = (served: Served, request: EmbeddingRequest, explain: boolean): Uint8Array => {
  const rest = JSON.stringify(envelope(served, request, explain))
  const chunks: Array<Uint8Array> = [listHead]
  let length = listHead.length
  const push = (chunk: Uint8Array) => {
    chunks.push(chunk)
    length += chunk.length
  }
  for (const [position, d] of served.data.entries()) {
    push(position === 0 ? itemHead : nextItemHead)
    const vector = d.embedding
    push(vector instanceof ForwardedVector ? vector.json : Buffer.from(JSON.stringify(vector), "latin1"))
    push(Buffer.from(`,"index":${d.index}}`, "latin1"))
  }
  // `rest` is an object's JSON: its opening brace becomes the comma after the list.
  push(Buffer.from(`],${rest.slice(1)}`, "utf8"))
  return Buffer.concat(chunks, length)
}

const listHead = Buffer.from(`{"object":"list","data":[`, "latin1")
const itemHead = Buffer.from(`{"object":"embedding","embedding":`, "latin1")
const nextItemHead = Buffer.from(`,{"object":"embedding","embedding":`, "latin1")

// Everything of the response but its list of vectors.
const envelope = (served: Served, request: EmbeddingRequest, explain: boolean) => {
  const upstreamCost = Money.toNumber(served.upstreamCostAtto)
  const details = multiModal(request) ? modalityDetails(served) : undefined
  const ignored = ignoredParameters(served.plan, served.endpoint, EmbeddingRequestSchema.sentParameters(request))
  return {
    model: served.model,
    id: served.id,
    provider: served.provider,
    usage: {
      prompt_tokens: served.promptTokens,
      total_tokens: served.totalTokens,
      cost: creditsFromNanos(served.costNanos),
      cost_details: {
        upstream_inference_prompt_cost: upstreamCost,
        upstream_inference_completions_cost: 0,
        upstream_inference_cost: upstreamCost
      },
      is_byok: served.isByok,
      ...(details === undefined ? {} : { prompt_tokens_details: details })
    },
    ...(served.vectorSpaceChange !== undefined || explain || ignored.length > 0 || served.cache.items > 0
      ? {
        switchyard: {
          ...(served.cache.items > 0
            ? { cache: { status: served.cache.outcome, items: served.cache.items, tokens: served.cache.tokens } }
            : {}),
          ...(served.vectorSpaceChange !== undefined ? { vector_space_change: served.vectorSpaceChange } : {}),
          ...(ignored.length > 0 ? { ignored_parameters: ignored } : {}),
          ...(explain ? { routing: { ...report(served.plan), tried: served.attempts } } : {})
        }
      }
      : {})
  }
}

const multiModal = (request: EmbeddingRequest) => EmbeddingRequestSchema.inputModalities(request).length >= 2

/**
 * `POST /embeddings` from a decoded request of an authenticated caller to its answer: what the
 * HttpApi route and the dedicated route (`EmbeddingsRoute`) both run.
 */
const create = Effect.gen(function*() {
  const serve = serveWith(yield* Embeddings, yield* Broadcast)
  // A model named without its vendor becomes the one served model of that name (after the key
  // check, so a management key still gets its 403 first).
  const resolved = resolveModel(yield* CurrentCatalog)
  return Effect.fnUntraced(function*(payload: EmbeddingRequest, request: HttpServerRequest.HttpServerRequest) {
    const caller = yield* requireStandardKey
    const answer = yield* serve(caller, yield* resolved(payload), request.headers)
    return HttpServerResponse.uint8Array(answer.body, { contentType: "application/json", headers: answer.headers })
  })
})

export const EmbeddingsHandlers = HttpApiBuilder.group(
  Api,
  "embeddings",
  Effect.fn(function*(handlers) {
    const embeddings = yield* Embeddings
    const loaded = yield* CurrentCatalog
    const serve = yield* create
    const resolved = resolveModel(loaded)
    return handlers
      .handle("create", ({ payload, request }) => serve(payload, request) as Effect.Effect<never, ApiError, Caller>)
      .handle("plan", ({ payload }) =>
        Effect.gen(function*() {
          const caller = yield* requireStandardKey
          const { options } = yield* requestOptions(payload, (yield* HttpServerRequest.HttpServerRequest).headers)
          const dry = yield* embeddings.dryRun(caller, yield* resolved(payload), options).pipe(answerPlan)
          return planReport("embeddings", dry.plan, { tokens: dry.estimatedPromptTokens, worstNanos: dry.estimatedCostNanos })
        })
      )
      .handle("listModels", ({ query }) =>
        Effect.succeed(
          ModelListing.list(loaded.catalog, {
            isActive: (p) => loaded.active.has(p.slug),
            ...(query.limit !== undefined ? { limit: query.limit } : {}),
            ...(query.offset !== undefined ? { offset: query.offset } : {})
          })
        )
      )
  })
)

/**
 * `POST /api/v1/embeddings` on a route of its own, ahead of the HttpApi route (DedicatedRoute.ts).
 */
export const EmbeddingsRoute = DedicatedRoute.layer({
  api: Api,
  group: Api.groups.embeddings,
  endpoint: Api.groups.embeddings.endpoints.create,
  handler: create
})
