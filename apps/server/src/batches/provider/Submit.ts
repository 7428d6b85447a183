import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Effect, Result } from "effect"
import { runLive, settle } from "./Settle.ts"
import { jobName, jobOf, maxSubmitFailures, type Runtime, type Step } from "./Runtime.ts"

/** Worth another try: the provider was busy or out of reach, not the request wrong. */
export const retryable = (error: UpstreamError.UpstreamError) => UpstreamError.failureClassOf(error.reason) === "next_provider"

/**
 * Submits a provider batch: its requests uploaded (where they are kept before the job is made, so
 * a restart in between finds the job made on them, or by its name), then the job made. A
 * submission refused for good, or too often, runs the lines live; a busy one is tried again later.
 */
export const submit = (run: Runtime, step: Step) =>
  Effect.gen(function*() {
    const { part, row, now, api, connection } = step
    if (step.stop !== undefined && part.upstream_batch_id === null) return yield* settle(run, row, part, undefined, undefined)
    const submitted = yield* Effect.result(Effect.gen(function*() {
      const name = jobName(part)
      let input = part.upstream_file_id
      let existing: BatchProvider.UpstreamBatch | undefined
      if (input === null) {
        input = yield* api.upload(connection, name, part.requests ?? "")
        // Kept before the job is made: a restart in between finds the job made on it.
        yield* run.parts.update(part, run.owner, { status: "submitting", nextPollAt: now, upstreamFileId: input, keepClaim: true })
      } else {
        existing = yield* api.find(connection, input, name)
      }
      return existing ?? (yield* api.create(connection, input, { ...jobOf(part), name }))
    }))
    if (Result.isSuccess(submitted)) {
      const upstream = submitted.success
      yield* run.parts.update(part, run.owner, {
        status: "running",
        nextPollAt: now + run.config.pollMs,
        upstreamBatchId: upstream.id,
        upstreamStatus: upstream.state,
        failures: 0
      })
      return
    }
    if (submitted.failure._tag !== "UpstreamError") return yield* Effect.fail(submitted.failure)
    const failures = part.failures + 1
    if (!retryable(submitted.failure) || failures >= maxSubmitFailures) {
      yield* Effect.logWarning("provider batch: submission refused, its lines run live").pipe(
        Effect.annotateLogs({ batch_id: part.batch_id, provider: part.provider, reason: submitted.failure.reason._tag })
      )
      return yield* runLive(run, row, part)
    }
    return yield* step.later(Math.min(run.config.pollMs, 1_000 * 2 ** failures), { failures })
  })
