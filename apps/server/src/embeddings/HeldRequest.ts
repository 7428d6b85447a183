import type { CallerShape } from "@switchyard/core/api/Authorization"
import type { Accounting, Reservation } from "@switchyard/core/store/Accounting"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import type * as CachedEmbed from "../cache/CachedEmbed.ts"
import type * as AttemptObserver from "../pipeline/AttemptObserver.ts"
import * as HeldAttempts from "../pipeline/HeldAttempts.ts"
import type { Prepared } from "./Preparation.ts"

/**
 * An embeddings request's hold and the attempts run under it, the same whichever way the request
 * is served (whole, as a batch's group, piece by piece): its worst case reserved for the caller,
 * then the plan's attempts in their fallback order under the request's time limits, each observed
 * for its endpoint's health (`HeldAttempts.run`, which releases the hold when none succeeds).
 */
export const make = (services: {
  readonly accounting: Accounting["Service"]
  readonly observe: ReturnType<typeof AttemptObserver.make<CachedEmbed.CachedResult>>
  readonly config: { readonly requestTimeoutMs: number; readonly attemptTimeoutMs: number }
}) => ({
  /** The request's worst case, held for the caller. */
  reserve: (caller: CallerShape, prepared: Prepared) =>
    services.accounting.reserve({
      keyId: caller.keyId,
      workspaceId: caller.workspaceId,
      amountNanos: prepared.worstNanos,
      byok: prepared.attempts.every((a) => a.byok)
    }),
  /** `attempts` run with `call` under `reservation`. */
  run: (
    caller: CallerShape,
    reservation: Reservation,
    attempts: ReadonlyArray<Fallback.Attempt>,
    call: Parameters<typeof HeldAttempts.run<CachedEmbed.CachedResult>>[0]["call"]
  ) =>
    HeldAttempts.run({
      accounting: services.accounting,
      reservation,
      attempts,
      call,
      observe: services.observe(caller),
      span: "Embeddings.attempt",
      tokensOf: (value) => value.promptTokens,
      timeoutMs: services.config.requestTimeoutMs,
      attemptTimeoutMs: services.config.attemptTimeoutMs
    })
})

export type HeldRequest = ReturnType<typeof make>
