/**
 * Admission of a model call by what its answer will hold (issue #50): the body's charge
 * (`MemoryBudget.ts`) bounds big bodies, not small bodies with big answers — 2,000 short inputs
 * make 65 MB of float JSON at 1,536 dimensions. Once a request is planned, before its first
 * upstream call, it is charged its expected answer as well, until the answer is made (from then
 * on the policies charge the answer's bytes while the socket takes them).
 *
 * **Details**
 *
 * - An embeddings answer: inputs × (dimensions × bytes per value + an item's envelope). A float
 *   is written as JSON text: `JSON.stringify` of float32 values measures 20.8 bytes a value on
 *   average for vectors of unit scale, 21.7 for values of small exponents (`1.2e-7`); 22 is
 *   counted. base64 is 4/3 × 4 bytes a value. The dimensions are the largest any endpoint of the
 *   plan answers with (the request's `dimensions` where the endpoint takes it).
 * - What the request holds at once is twice that: the upstream answers (the vectors stay in the
 *   upstream's bytes) and the answer made of them.
 * - A rerank answer: its documents echoed back (unless `return_documents: false`) and a result of
 *   about 100 bytes each.
 * - More than the whole budget: `AnswerTooLarge` (413, naming the budget and how many items fit
 *   a request). More than what is left now: `MemoryBusy` (503 with `Retry-After`; naming the
 *   share when the workspace or key holds its share while others need the memory), after a wait
 *   in line of at most 10 s for a request below its share, or, for a batch's line (`wait`), a
 *   wait until it fits.
 */
import { AnswerTooLarge, MemoryBusy } from "@switchyard/core/errors/EmbeddingsError"
import { Duration, Effect, type Scope } from "effect"
import type { Owner } from "./FairShare.ts"
import { type MemoryBudget, type MemoryRefused, RequestCharge } from "./MemoryBudget.ts"

/** JSON text of one float32 value, worst case of what `JSON.stringify` writes, with its comma. */
export const floatValueBytes = 22
/** base64 of one float32 value. */
const base64ValueBytes = 16 / 3
/** One item's envelope: `{"object":"embedding","embedding":…,"index":1234}`. */
const itemBytes = 64
/** What a request holds per byte of its answer: the upstream answers and the answer itself. */
const heldFactor = 2
/** One rerank result without its document: index, score, the object's keys. */
const resultBytes = 100
/** How soon a request refused for the memory held now is worth sending again. */
const retryAfterSeconds = 1
/** How often a waiting batch line looks again. */
const waitStep = Duration.millis(250)

/** The bytes one input of an embeddings answer holds while the request is served. */
const embeddingItemBytes = (dimensions: number, encoding: "float" | "base64"): number =>
  heldFactor * (Math.ceil(dimensions * (encoding === "base64" ? base64ValueBytes : floatValueBytes)) + itemBytes)

export interface Expected {
  /** The bytes the request holds while it is served. */
  readonly bytes: number
  /** What they count, for the message: "2000 inputs × 1536 dimensions as float JSON". */
  readonly what: string
  readonly items: "inputs" | "documents"
  readonly count: number
  /** The bytes one more item adds: how many fit the budget follows. */
  readonly perItem: number
}

/** What an embeddings request of `inputs` holds, at `dimensions` in `encoding`. */
export const embeddings = (inputs: number, dimensions: number, encoding: "float" | "base64"): Expected => {
  const perItem = embeddingItemBytes(dimensions, encoding)
  return {
    bytes: inputs * perItem,
    what: `${inputs} inputs × ${dimensions} dimensions as ${encoding === "base64" ? "base64" : "float JSON"}`,
    items: "inputs",
    count: inputs,
    perItem
  }
}

/** What a rerank request of these documents (their bytes as text) holds in its answer. */
export const rerank = (documentBytes: ReadonlyArray<number>, returnDocuments: boolean): Expected => {
  const total = documentBytes.reduce((n, b) => n + b, 0)
  const perItem = resultBytes + (returnDocuments && documentBytes.length > 0 ? Math.ceil(total / documentBytes.length) : 0)
  return {
    bytes: documentBytes.length * resultBytes + (returnDocuments ? total : 0),
    what: `${documentBytes.length} documents${returnDocuments ? " returned with their text" : ""}`,
    items: "documents",
    count: documentBytes.length,
    perItem
  }
}

/** How long a live request below its share waits in line for its answer's bytes before a 503. */
const liveWaitMs = 10_000

const busy = (expected: Expected, refused?: MemoryRefused) =>
  new MemoryBusy({
    answerBytes: expected.bytes,
    retryAfterSeconds,
    ...(refused?.reason === "share" ? { share: { level: refused.level ?? "workspace", percent: refused.sharePercent, bytes: refused.shareBytes } } : {})
  })

// Charges `expected` to `owner`, or refuses it; with `wait` (a batch line), looks again on the
// clock while it could fit later.
const take = (budget: MemoryBudget["Service"], owner: Owner, expected: Expected, options: { readonly wait?: boolean }) =>
  Effect.withFiber((fiber): Effect.Effect<void, AnswerTooLarge | MemoryBusy> => {
    const own = fiber.getRef(RequestCharge)
    if (expected.bytes > budget.budgetBytes) {
      return Effect.fail(
        new AnswerTooLarge({
          answerBytes: expected.bytes,
          budgetBytes: budget.budgetBytes,
          what: expected.what,
          items: expected.items,
          maxItems: Math.max(1, Math.floor(budget.budgetBytes / Math.max(1, expected.perItem)))
        })
      )
    }
    if (options.wait !== true) {
      return budget.acquire(owner, expected.bytes, { waitMs: liveWaitMs, own }).pipe(
        Effect.mapError((refused) => busy(expected, refused))
      )
    }
    const acquire: Effect.Effect<void> = Effect.suspend(() =>
      budget.tryTake(owner, expected.bytes, own)._tag === "Take" ? Effect.void : Effect.sleep(waitStep).pipe(Effect.andThen(acquire))
    )
    return acquire
  })

/**
 * Runs `self` with the request's expected answer charged to the budget for `owner`, released when
 * it ends. Refuses it (`AnswerTooLarge`, `MemoryBusy`) before `self` starts when it does not fit;
 * a request below its share waits in line for a while first; with `wait`, waits (on the clock)
 * while it could fit later.
 */
export const charged = (budget: MemoryBudget["Service"], owner: Owner, expected: Expected, options: { readonly wait?: boolean } = {}) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E | AnswerTooLarge | MemoryBusy, R> =>
  expected.bytes === 0
    ? self
    : Effect.acquireUseRelease(take(budget, owner, expected, options), () => self, () => Effect.sync(() => budget.release(owner, expected.bytes)))

/**
 * Charges the expected answer until the scope closes (an answer written after its handler
 * returned: the request's scope closes once the body is written or the client is gone), or
 * refuses it as {@link charged} does.
 */
export const chargedInScope = (
  budget: MemoryBudget["Service"],
  owner: Owner,
  expected: Expected
): Effect.Effect<void, AnswerTooLarge | MemoryBusy, Scope.Scope> =>
  expected.bytes === 0
    ? Effect.void
    : Effect.acquireRelease(take(budget, owner, expected, {}), () => Effect.sync(() => budget.release(owner, expected.bytes)))
