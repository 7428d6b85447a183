/**
 * A large embeddings answer written as it is made (issue #50): the request's inputs are sent in
 * pieces sized by the bytes of their answer, and each piece's items are written to the socket as
 * soon as it and every piece before it have returned, so that a request holds a few pieces, never
 * its whole answer.
 *
 * **Details**
 *
 * - A piece holds at most 8 MiB (its upstream answer and the bytes written of it), less when the
 *   memory budget is small: a request's pieces in flight (`SWITCHYARD_BATCH_CONCURRENCY`, 4) hold
 *   at most half the budget. At 1,536 float dimensions a piece is 123 inputs; a 2,000-input
 *   request is 17 upstream calls, 4 at a time, and is charged 33 MB instead of 135 MB.
 * - The first piece runs the route's attempts with their fallbacks, under the request's hold, as
 *   any request does; the status and headers are sent only once it has returned, so a request
 *   that fails before its first byte is an ordinary error answer. The other pieces go to the
 *   endpoint that served the first (one vector space for the whole answer), under the same
 *   deadline.
 * - The bytes are those of the whole answer (`Answer.parts`): the list's head, the items in
 *   order, then the usage, written after the ledger row is on disk (an answer's usage iff its row).
 * - A piece that fails after the first byte ends the list with the spec's error object in place of
 *   the usage (`{"object":"list","data":[…],"error":{"code":…,"message":…}}`).
 * - What a failure or a disconnect midway charges: the pieces the upstream answered, at the
 *   serving endpoint's price, as one ledger row under the answer's generation id — what the
 *   gateway paid for the caller. A piece cut off while in flight is not charged.
 * - Only a request that reads no cache, of texts or token ids, with more than one piece, is
 *   written this way; the others are made whole, as before, and charged whole (`AnswerAdmission`).
 */
import type { CallerShape } from "@switchyard/core/api/Authorization"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import * as EmbeddingsError from "@switchyard/core/errors/EmbeddingsError"
import { RequestTimedOut } from "@switchyard/core/errors/EmbeddingsError"
import type * as EmbeddingRequest from "@switchyard/core/schema/EmbeddingRequest"
import type { Accounting } from "@switchyard/core/store/Accounting"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import * as Fallback from "@switchyard/core/upstream/Fallback"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect, type Scope, Stream } from "effect"
import type * as CachedEmbed from "../cache/CachedEmbed.ts"
import * as AnswerAdmission from "../http/AnswerAdmission.ts"
import { type MemoryBudget, ownerOf } from "../http/MemoryBudget.ts"
import type * as AttemptObserver from "../pipeline/AttemptObserver.ts"
import * as HeldAttempts from "../pipeline/HeldAttempts.ts"
import * as UpstreamInput from "../providers/UpstreamInput.ts"
import type { InFlight } from "../store/money/InFlight.ts"
import * as Answer from "./Answer.ts"
import type { HeldRequest } from "./HeldRequest.ts"
import type { Prepared } from "./Preparation.ts"
import * as Settlement from "./Settlement.ts"
import type * as UpstreamAttempt from "./UpstreamAttempt.ts"

const MiB = 1024 * 1024

/** The most one piece of an answer holds: its upstream answer and the bytes written of it. */
const pieceBytes = 8 * MiB

/**
 * The inputs of one piece, for an answer whose item holds `perItem` bytes (`AnswerAdmission`'s
 * measure) and whose `window` pieces run at once: at most 8 MiB a piece, and the window at most
 * half the budget.
 */
export const itemsPerPiece = (budgetBytes: number, perItem: number, window: number): number =>
  Math.max(1, Math.floor(Math.min(pieceBytes, Math.floor(budgetBytes / (2 * Math.max(1, window)))) / Math.max(1, perItem)))

/** Whether a request is written piece by piece: it reads no cache, it is text or token ids, and it is more than one piece. */
export const streams = (prepared: Prepared, perPiece: number): boolean =>
  !prepared.cachePolicy.read && prepared.input._tag !== "Multimodal" && UpstreamInput.count(prepared.input) > perPiece

/** A request being answered piece by piece, once its first piece has returned. */
export interface Progress {
  readonly id: string
  readonly model: string
  /** The provider whose endpoint serves every piece. */
  readonly provider: string
  /** The first piece's attempts: the route's fallbacks happen there. */
  readonly attempts: ReadonlyArray<Fallback.AttemptReport>
  readonly isByok: boolean
  /** The route's draw, for `x-switchyard-seed`. */
  readonly seed: number
  /** What the embeddings cache did: it was not read (`miss` when it is written, else `bypass`). */
  readonly cache: CachePolicy.Outcome
  /**
   * The answer's bytes: the list's head and the first piece's items, each further piece's items
   * in order as they return, then `finish` of the settled request (its usage), or the error object.
   * `settled` sees the request as settled, whether its body ends with usage or with an error.
   */
  readonly body: (
    finish: (served: Settlement.Served) => Effect.Effect<Uint8Array>,
    settled: (served: Settlement.Served) => Effect.Effect<void>
  ) => Stream.Stream<Uint8Array>
}

/** What the pieces need: the services of `Embeddings`. */
export interface Services {
  readonly accounting: Accounting["Service"]
  readonly budget: MemoryBudget["Service"]
  readonly inFlight: InFlight["Service"]
  readonly attempt: ReturnType<typeof UpstreamAttempt.make>
  readonly held: HeldRequest
  readonly observe: ReturnType<typeof AttemptObserver.make<CachedEmbed.CachedResult>>
  readonly config: { readonly requestTimeoutMs: number; readonly attemptTimeoutMs: number; readonly batchConcurrency: number }
}

// What the pieces answered so far: what a settlement charges.
interface Tally {
  promptTokens: number
  totalTokens: number
  estimated: boolean
  readonly upstreamIds: Array<string | undefined>
  settled: boolean
}

// A piece's items, at its offset in the request, sorted as the upstream may not have.
const itemsOf = (result: CachedEmbed.CachedResult, offset: number, first: boolean, head?: Uint8Array): Uint8Array => {
  const chunks: Array<Uint8Array> = head === undefined ? [] : [head]
  Answer.items(chunks, [...result.embeddings].sort((a, b) => a.index - b.index), offset, first)
  return Buffer.concat(chunks)
}

/**
 * Answers `request` piece by piece (see the module notes): charges its window of pieces, holds
 * its worst case, runs its first piece through the route's attempts. The charge, and a
 * settlement of what was answered when the body does not reach its end, belong to the scope.
 */
export const make = (services: Services) =>
  Effect.fnUntraced(function*(
    caller: CallerShape,
    request: EmbeddingRequest.EmbeddingRequest,
    prepared: Prepared,
    expected: AnswerAdmission.Expected,
    perPiece: number,
    timing: { readonly startedAt: number; readonly givenId: string | undefined }
  ): Effect.fn.Return<Progress, EmbeddingsError.EmbeddingsError, Scope.Scope> {
    const { accounting, config } = services
    const window = Math.max(1, config.batchConcurrency)
    const pieces = UpstreamInput.batches(prepared.input, perPiece)
    // The inputs of the pieces in flight at once, the window's last piece perhaps short.
    yield* AnswerAdmission.chargedInScope(services.budget, ownerOf(caller), { ...expected, bytes: Math.min(expected.count, window * perPiece) * expected.perItem })
    const id = timing.givenId ?? (yield* Settlement.generationId)
    const reservation = yield* services.held.reserve(caller, prepared)
    const deadline = (yield* Clock.currentTimeMillis) + config.requestTimeoutMs
    const pieceOf = (i: number): Prepared => ({ ...prepared, input: pieces[i]! })
    const first = yield* services.held.run(caller, reservation, prepared.attempts, services.attempt(request, pieceOf(0)).call())
    const tally: Tally = {
      promptTokens: first.value.promptTokens,
      totalTokens: first.value.totalTokens,
      estimated: first.value.tokensEstimated === true,
      upstreamIds: [first.value.upstreamId],
      settled: false
    }
    // Settles the hold at what the pieces answered so far, once.
    const settle = Effect.suspend(() => {
      tally.settled = true
      const upstreamId = AttemptRecord.joinIds(tally.upstreamIds)
      const value: CachedEmbed.CachedResult = {
        ...first.value,
        embeddings: [],
        promptTokens: tally.promptTokens,
        totalTokens: tally.totalTokens,
        ...(upstreamId === undefined ? {} : { upstreamId }),
        ...(tally.estimated ? { tokensEstimated: true } : {})
      }
      return Effect.flatMap(Clock.currentTimeMillis, (now) =>
        services.inFlight.track(
          Settlement.settle(accounting, reservation, request, prepared, { ...first, value }, now - timing.startedAt, id)
        ))
    })
    // A body never written to its end (the client gone, the request cut) is settled when the
    // request's scope closes.
    yield* Effect.addFinalizer(() => tally.settled ? Effect.void : Effect.ignore(settle))

    const { attempt } = first
    const slug = attempt.candidate.provider.slug
    const limit = HeldAttempts.limitOf(attempt, config.attemptTimeoutMs, deadline, () => new RequestTimedOut({ timeoutMs: config.requestTimeoutMs }))
    const observe = services.observe(caller)
    // Each piece feeds the endpoint's health as an attempt does: its latency, or the failure that
    // opens its outage window.
    const piece = (i: number) =>
      Fallback.observed(
        attempt,
        services.attempt(request, pieceOf(i)).call()(attempt, limit).pipe(
          Effect.mapError((error) => error._tag === "UpstreamError" ? UpstreamError.atProvider(slug)(error) : error)
        ),
        observe
      ).pipe(
        Effect.flatMap(({ exit }) => exit),
        Effect.map((result) => {
          tally.promptTokens += result.promptTokens
          tally.totalTokens += result.totalTokens
          tally.estimated ||= result.tokensEstimated === true
          tally.upstreamIds.push(result.upstreamId)
          return itemsOf(result, i * perPiece, false)
        }),
        Effect.mapError((error): EmbeddingsError.EmbeddingsError =>
          error._tag === "UpstreamError"
            ? new Fallback.UpstreamFailed({
              error,
              provider: slug,
              endpoint: attempt.candidate.id,
              attempts: first.reports
            })
            : error
        )
      )
    const rest = Array.from({ length: pieces.length - 1 }, (_, i) => i + 1)

    return {
      id,
      model: attempt.candidate.endpoint.model,
      provider: slug,
      attempts: first.reports,
      isByok: attempt.byok,
      seed: prepared.plan.seed,
      cache: CachePolicy.outcome(prepared.cachePolicy, UpstreamInput.count(prepared.input), 0),
      body: (finish, settled) =>
        Stream.succeed(itemsOf(first.value, 0, true, Answer.listHead)).pipe(
          Stream.concat(Stream.fromIterable(rest).pipe(Stream.mapEffect(piece, { concurrency: window }))),
          Stream.concat(Stream.fromEffect(settle.pipe(Effect.tap(settled), Effect.flatMap(finish)))),
          // After the first byte a failure can only end the answer: with the error object, the
          // pieces answered settled first.
          Stream.catch((error) =>
            Stream.fromEffect(
              (tally.settled ? Effect.void : Effect.ignore(settle.pipe(Effect.tap(settled)))).pipe(
                Effect.as(Answer.errorTail(EmbeddingsError.toApiError(error)))
              )
            )
          )
        )
    } satisfies Progress
  })
