import * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Result } from "effect"
import { cancelWaitMs, maxSubmitFailures, type Runtime, type Step } from "./Runtime.ts"
import { settle } from "./Settle.ts"
import { retryable } from "./Submit.ts"

/**
 * Asks the provider how a submitted provider batch stands: an ended one is settled; a batch
 * cancelled (or out of time) here has its provider batch cancelled, and is waited for a while; a
 * provider that cannot say, too often, fails its lines.
 */
export const poll = (run: Runtime, step: Step) =>
  Effect.gen(function*() {
    const { part, row, now, api, connection, later } = step
    const { config, parts, owner } = run
    const id = part.upstream_batch_id!
    const upstream = yield* Effect.result(api.retrieve(connection, id))
    if (Result.isFailure(upstream)) {
      const error = upstream.failure
      // A provider that no longer knows its batch (or our key) says so for good: the lines fail.
      const failures = retryable(error) ? part.failures : part.failures + 1
      if (failures >= maxSubmitFailures) {
        return yield* settle(run, row, part, undefined, undefined, `the provider batch ${id} could not be read: ${UpstreamError.describe(error.reason, part.provider)}`)
      }
      return yield* later(part.status === "cancelling" ? config.loopMs : config.pollMs, { failures })
    }
    const state = upstream.success.state
    if (BatchProvider.ended(state)) return yield* settle(run, row, part, upstream.success, connection)
    if (part.status === "cancelling") {
      if (now - Number(part.cancel_sent_at ?? now) > cancelWaitMs) return yield* settle(run, row, part, undefined, undefined)
      return yield* later(config.loopMs, { upstreamStatus: state })
    }
    if (step.stop !== undefined) {
      // Cancelled (or out of time) here: the provider batch is cancelled too, and its results so far kept.
      yield* Effect.ignore(api.cancel(connection, id))
      return yield* parts.update(part, owner, { status: "cancelling", nextPollAt: now + config.loopMs, cancelSentAt: now, upstreamStatus: "cancelling" })
    }
    return yield* later(config.pollMs, { upstreamStatus: state })
  })
