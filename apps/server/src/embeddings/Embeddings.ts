import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as Cost from "@switchyard/core/catalog/Cost"
import type { EmbeddingsError, PreparationError } from "@switchyard/core/errors/EmbeddingsError"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import type * as RoutePlan from "@switchyard/core/routing/RoutePlan"
import type * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import { Accounting, type Reservation } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import { Clock, Context, Effect, Exit, Layer, Result, type Scope } from "effect"
import * as Money from "@switchyard/core/catalog/Money"
import type { EmbeddingProvider } from "@switchyard/core"
import * as Route from "../pipeline/Route.ts"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { Adapters } from "../providers/Adapters.ts"
import { Replicas } from "../providers/Replicas.ts"
import * as CachedEmbed from "../cache/CachedEmbed.ts"
import { EmbeddingCache } from "../cache/EmbeddingCache.ts"
import { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import * as RequestFacts from "../instrumentation/RequestFacts.ts"
import { EndpointHealth } from "../pipeline/EndpointHealth.ts"
import * as Preparation from "./Preparation.ts"
import * as Settlement from "./Settlement.ts"
import * as UpstreamAttempt from "./UpstreamAttempt.ts"
import * as UpstreamInput from "../providers/UpstreamInput.ts"
import { Workspaces } from "../pipeline/Workspaces.ts"
import { InFlight } from "../store/money/InFlight.ts"
import * as AttemptObserver from "../pipeline/AttemptObserver.ts"
import * as HeldAttempts from "../pipeline/HeldAttempts.ts"
import * as Span from "../instrumentation/Span.ts"
import * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import * as AnswerAdmission from "../http/AnswerAdmission.ts"
import { MemoryBudget, ownerOf } from "../http/MemoryBudget.ts"

import * as HeldRequest from "./HeldRequest.ts"
import * as Streamed from "./Streamed.ts"

export type { CallOptions } from "./Preparation.ts"
export type { Served } from "./Settlement.ts"

export interface DryRun {
  readonly plan: RoutePlan.Plan
  readonly estimatedPromptTokens: number
  readonly estimatedCostNanos: bigint
}

// What the answer will hold: its inputs at the widest vectors any endpoint of the plan answers.
const expected = (request: EmbeddingRequest.EmbeddingRequest, prepared: Preparation.Prepared) =>
  AnswerAdmission.embeddings(
    UpstreamInput.count(prepared.input),
    Math.max(0, ...prepared.attempts.map(({ candidate }) => EndpointParameters.forEndpoint(request, candidate.provider, candidate.endpoint).width)),
    request.encoding_format ?? "float"
  )

// What the cache did for a request, counted once whatever number of endpoints it was looked
// up at or tried: each item a hit when the answer came from the cache, else a miss (a request
// that does not read the cache counts nothing), and the cache's outcome noted for the
// access line.
const countedOn = (metrics: GatewayMetrics["Service"]) => (prepared: Preparation.Prepared, exit: Exit.Exit<Settlement.Served, unknown>) => {
  const items = UpstreamInput.count(prepared.input)
  const cache = Exit.isSuccess(exit)
    ? exit.value.cache
    : { outcome: CachePolicy.outcome(prepared.cachePolicy, items, 0), items: 0, bytes: 0 }
  if (prepared.cachePolicy.read) {
    metrics.cacheRead({ model: prepared.plan.model, hits: cache.items, misses: items - cache.items, bytes: cache.bytes })
  }
  return RequestFacts.note({ cache: cache.outcome })
}

/** A live request's answer: made whole, or written piece by piece as its pieces return. */
export type Answered =
  | { readonly _tag: "Whole"; readonly served: Settlement.Served }
  | { readonly _tag: "Streamed"; readonly progress: Streamed.Progress }

/** What a group of batch lines served as one upstream call needs. */
interface GroupServices {
  readonly accounting: Accounting["Service"]
  readonly attempt: ReturnType<typeof UpstreamAttempt.make>
  readonly held: HeldRequest.HeldRequest
}

/**
 * Lines of a batch served as one upstream call: each held on its own, the admitted ones' texts
 * sent together, the answer's vectors and tokens apportioned back, and each line settled alone.
 */
const groupedOn = ({ accounting, attempt, held: heldRequest }: GroupServices) =>
(
  caller: CallerShape,
  requests: ReadonlyArray<{ readonly request: EmbeddingRequest.EmbeddingRequest; readonly generationId: string }>,
  inputs: ReadonlyArray<EmbeddingProvider.EmbeddingInput>,
  texts: (i: number) => ReadonlyArray<string>,
  combined: EmbeddingRequest.EmbeddingRequest,
  prepared: Preparation.Prepared,
  startedAt: number
): Effect.Effect<ReadonlyArray<Result.Result<Settlement.Served, EmbeddingsError>>> =>
  Effect.gen(function*() {
    const bounds = inputs.map(UpstreamInput.tokenBound)
    const byok = prepared.attempts.every((a) => a.byok)
    const held = yield* Effect.forEach(requests, (_, i) =>
      Effect.result(accounting.reserve({
        keyId: caller.keyId,
        workspaceId: caller.workspaceId,
        amountNanos: Money.toUnits(
          Route.worstOf(prepared.plan, (endpoint) => Cost.compute(endpoint.pricing, { prompt_tokens: bounds[i]!.tokens, images: 0 }).total),
          9,
          "up"
        ),
        byok
      })), { concurrency: "unbounded" })
    const results: Array<Result.Result<Settlement.Served, EmbeddingsError> | undefined> = held.map((h) =>
      Result.isFailure(h) ? Result.fail(h.failure) : undefined
    )
    const admitted: Array<number> = []
    const reservations: Array<Reservation> = []
    for (const [i, h] of held.entries()) {
      if (Result.isSuccess(h)) {
        admitted.push(i)
        reservations.push(h.success)
      }
    }
    const done = () => results.map((r) => r!)
    if (admitted.length === 0) return done()
    const input: EmbeddingProvider.EmbeddingInput = { _tag: "Texts", texts: admitted.flatMap(texts) }
    const request = { ...combined, input: input.texts }
    const bound = UpstreamInput.tokenBound(input)
    const group: Preparation.Prepared = {
      ...prepared,
      input,
      bound,
      worstNanos: reservations.reduce((n, r) => n + r.amountNanos, 0n)
    }
    const outcome = yield* Effect.result(heldRequest.run(caller, reservations[0]!, group.attempts, attempt(request, group).call()))
    if (Result.isFailure(outcome)) {
      yield* Effect.forEach(reservations, accounting.release, { discard: true })
      for (const i of admitted) results[i] = Result.fail(outcome.failure)
      return done()
    }
    const served = outcome.success
    const weights = admitted.map((i) => bounds[i]!.tokens)
    const prompt = CachedEmbed.apportion(served.value.promptTokens, weights)
    const total = CachedEmbed.apportion(served.value.totalTokens, weights)
    const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
    let offset = 0
    yield* Effect.forEach(admitted, (i, j) => {
      const count = texts(i).length
      const from = offset
      offset += count
      const own = served.value.embeddings
        .filter((e) => e.index >= from && e.index < from + count)
        .map((e) => ({ index: e.index - from, embedding: e.embedding }))
      const value: CachedEmbed.CachedResult = {
        embeddings: own,
        promptTokens: prompt[j]!,
        totalTokens: total[j]!,
        cachedItems: 0,
        cachedTokens: 0,
        cachedBytes: 0,
        sent: inputs[i]
      }
      const line: Preparation.Prepared = { ...prepared, input: inputs[i]!, bound: bounds[i]!, worstNanos: reservations[j]!.amountNanos }
      return Settlement.settle(accounting, reservations[j]!, requests[i]!.request, line, { ...served, value }, latencyMs, requests[i]!.generationId).pipe(
        Effect.result,
        Effect.flatMap((settled) =>
          Effect.sync(() => {
            results[i] = settled
          })
        )
      )
    }, { concurrency: "unbounded", discard: true })
    return done()
  })

type Line = { readonly request: EmbeddingRequest.EmbeddingRequest; readonly generationId: string }

/**
 * A batch's lines of text served together where they can (`grouped`), else line by line, each
 * waiting for memory.
 */
const manyOn = (services: {
  readonly prepare: ReturnType<typeof Preparation.make>
  readonly budget: MemoryBudget["Service"]
  readonly grouped: ReturnType<typeof groupedOn>
  readonly create: (caller: CallerShape, request: EmbeddingRequest.EmbeddingRequest, options: Preparation.CallOptions) => Effect.Effect<Settlement.Served, EmbeddingsError>
}) => {
  const { prepare, budget, grouped, create } = services
  // Counted in flight with the other requests of its `createMany`; a batch's line waits for memory.
  const one = (caller: CallerShape, request: EmbeddingRequest.EmbeddingRequest, generationId: string) =>
    Effect.result(create(caller, request, { generationId, waitForMemory: true }))
  return (caller: CallerShape, requests: ReadonlyArray<Line>): Effect.Effect<ReadonlyArray<Result.Result<Settlement.Served, EmbeddingsError>>> =>
    Effect.gen(function*() {
      const startedAt = yield* Clock.currentTimeMillis
      const inputs = requests.map((r) => UpstreamInput.normalize(r.request.input))
      const texts = (i: number) => {
        const input = inputs[i]!
        return input._tag === "Texts" ? input.texts : []
      }
      const combined = { ...requests[0]!.request, input: requests.flatMap((_, i) => texts(i)) }
      const planned = yield* Effect.result(prepare(caller, combined, {}))
      if (Result.isFailure(planned)) return requests.map(() => Result.fail(planned.failure))
      const prepared = planned.success
      const whole = expected(combined, prepared)
      // A group whose answer could never fit is served line by line: each line that could fits
      // in its turn, a line that never could fails alone.
      if (
        requests.length === 1 || prepared.cachePolicy.read || inputs.some((input) => input._tag !== "Texts") ||
        whole.bytes > budget.budgetBytes
      ) {
        return yield* Effect.forEach(requests, (r) => one(caller, r.request, r.generationId), { concurrency: requests.length === 1 || whole.bytes <= budget.budgetBytes ? "unbounded" : 1 })
      }
      return yield* grouped(caller, requests, inputs, texts, combined, prepared, startedAt).pipe(
        AnswerAdmission.charged(budget, ownerOf(caller), whole, { wait: true }),
        // Only a refusal of the whole can fail here, and a group that fits the budget waits.
        Effect.catch((refused) => Effect.succeed(requests.map((): Result.Result<Settlement.Served, EmbeddingsError> => Result.fail(refused))))
      )
    })
}

/**
 * Embeddings end to end: prepare (plan the route, find the worst case), reserve it, run the
 * plan's attempts, settle the actual cost. A request whose every item the cache holds for one
 * endpoint of the plan skips the hold and the attempts: its ledger row is recorded at cost 0,
 * credited to that endpoint.
 * Failures are facts (`EmbeddingsError`); the route gives them their status.
 */
export class Embeddings extends Context.Service<Embeddings, {
  readonly create: (
    caller: CallerShape,
    request: EmbeddingRequest.EmbeddingRequest,
    options: Preparation.CallOptions
  ) => Effect.Effect<Settlement.Served, EmbeddingsError>
  /**
   * A live request: as {@link create}, except that a request of more than one piece of answer
   * that reads no cache is answered piece by piece (`Streamed.ts`), its charge and its
   * settlement held by the scope until the body is written.
   */
  readonly answer: (
    caller: CallerShape,
    request: EmbeddingRequest.EmbeddingRequest,
    options: Preparation.CallOptions
  ) => Effect.Effect<Answered, EmbeddingsError, Scope.Scope>
  readonly dryRun: (
    caller: CallerShape,
    request: EmbeddingRequest.EmbeddingRequest,
    options: Preparation.CallOptions
  ) => Effect.Effect<DryRun, PreparationError | StoreUnavailable>
  /**
   * Requests of text input that differ only in their input (a batch's lines), served by one
   * route and one run of attempts whose input is all of theirs, each still held, settled and
   * recorded as its own generation: its share of the upstream's token count (in proportion to
   * its items' bounds, whole tokens that add up to the count) at the serving endpoint's price.
   * A request refused by a limit fails alone. A workspace that reads the embeddings cache has
   * each request served on its own.
   */
  readonly createMany: (
    caller: CallerShape,
    requests: ReadonlyArray<{ readonly request: EmbeddingRequest.EmbeddingRequest; readonly generationId: string }>
  ) => Effect.Effect<ReadonlyArray<Result.Result<Settlement.Served, EmbeddingsError>>>
}>()("@switchyard/server/embeddings/Embeddings") {
  static readonly layer = Layer.effect(
    Embeddings,
    Effect.gen(function*() {
      const loaded = yield* CurrentCatalog
      const health = yield* EndpointHealth
      const accounting = yield* Accounting
      const inFlight = yield* InFlight
      const config = yield* HeldAttempts.CallConfig
      const prepare = Preparation.make({ loaded, health, byok: yield* ByokStore, workspaces: yield* Workspaces })
      const metrics = yield* GatewayMetrics
      const budget = yield* MemoryBudget
      const attempt = UpstreamAttempt.make({
        adapters: yield* Adapters,
        replicas: yield* Replicas,
        cache: yield* EmbeddingCache,
        metrics,
        batchConcurrency: config.batchConcurrency
      })

      const observe = AttemptObserver.make(health, (value: CachedEmbed.CachedResult) => value.promptTokens)
      const held = HeldRequest.make({ accounting, observe, config })
      const grouped = groupedOn({ accounting, attempt, held })
      const counted = countedOn(metrics)

      const serve = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        prepared: Preparation.Prepared,
        startedAt: number,
        givenId: string | undefined
      ) {
        const attempts = attempt(request, prepared)
        // Every endpoint of the plan is looked up before any hold, in one read: when the cache
        // holds all the items of one endpoint (the first such in plan order), the request costs
        // nothing and needs neither a hold nor an upstream call, and that endpoint is credited.
        // (A workspace without the cache, the default, reads nothing: no item is even hashed.)
        const found = prepared.cachePolicy.read ? yield* attempts.lookup(prepared.attempts) : undefined
        const served = found === undefined ? undefined : CachedEmbed.firstWhole(prepared.attempts, found)
        if (served !== undefined) {
          const latencyMs = (yield* Clock.currentTimeMillis) - startedAt
          const { asked } = UpstreamAttempt.shapeOf(request, prepared, served.attempt.candidate)
          // No upstream took part: the answer has no attempt.
          return yield* Settlement.record(accounting, caller, request, prepared, {
            ...served,
            value: UpstreamAttempt.finish(asked, served.value),
            reports: []
          }, latencyMs, givenId)
        }
        return yield* HeldAttempts.settledOnce(
          held.reserve(caller, prepared),
          (reservation) => held.run(caller, reservation, prepared.attempts, attempts.call(found)),
          (reservation, outcome) =>
            Effect.flatMap(Clock.currentTimeMillis, (now) =>
              Settlement.settle(accounting, reservation, request, prepared, outcome, now - startedAt, givenId))
        )
      })

      // An answer made whole: charged before the cache is read or any upstream called, until it is made.
      const whole = (
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        prepared: Preparation.Prepared,
        startedAt: number,
        options: Preparation.CallOptions,
        answerBytes: AnswerAdmission.Expected
      ) =>
        serve(caller, request, prepared, startedAt, options.generationId).pipe(
          AnswerAdmission.charged(budget, ownerOf(caller), answerBytes, { wait: options.waitForMemory === true }),
          Effect.onExit((exit) => counted(prepared, exit))
        )

      const create = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: Preparation.CallOptions
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const prepared = yield* prepare(caller, request, options)
        return yield* whole(caller, request, prepared, startedAt, options, expected(request, prepared))
      }, Span.within("Embeddings.create"))

      const streamed = Streamed.make({ accounting, budget, inFlight, attempt, held, observe, config })

      const answer = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: Preparation.CallOptions
      ) {
        const startedAt = yield* Clock.currentTimeMillis
        const prepared = yield* prepare(caller, request, options)
        const answerBytes = expected(request, prepared)
        const perPiece = Streamed.itemsPerPiece(budget.budgetBytes, answerBytes.perItem, config.batchConcurrency)
        if (!Streamed.streams(prepared, perPiece)) {
          const served = yield* inFlight.track(whole(caller, request, prepared, startedAt, options, answerBytes))
          return { _tag: "Whole", served } satisfies Answered
        }
        const progress = yield* streamed(caller, request, prepared, answerBytes, perPiece, { startedAt, givenId: options.generationId })
        yield* RequestFacts.note({ cache: progress.cache })
        return { _tag: "Streamed", progress } satisfies Answered
      }, Span.within("Embeddings.create"))

      const dryRun = Effect.fnUntraced(function*(
        caller: CallerShape,
        request: EmbeddingRequest.EmbeddingRequest,
        options: Preparation.CallOptions
      ) {
        const prepared = yield* prepare(caller, request, options)
        const primary = prepared.plan.attempts[0]!
        const estimate = Cost.compute(primary.endpoint.pricing, {
          prompt_tokens: prepared.bound.tokens,
          images: prepared.bound.images
        }).total
        return {
          plan: prepared.plan,
          estimatedPromptTokens: prepared.bound.tokens,
          estimatedCostNanos: HeldAttempts.nanosOf(estimate)
        } satisfies DryRun
      }, Span.within("Embeddings.dryRun"))

      const createMany = manyOn({ prepare, budget, grouped, create })

      // Counted until settled: the ledger batch waits a moment for the rows of requests in flight.
      return Embeddings.of({
        create: (caller, request, options) => inFlight.track(create(caller, request, options)),
        answer,
        dryRun,
        // Each of its requests writes a row of its own: the ledger batch waits for all of theirs.
        createMany: (caller, requests) => inFlight.track(createMany(caller, requests), requests.length)
      })
    })
  )
}
