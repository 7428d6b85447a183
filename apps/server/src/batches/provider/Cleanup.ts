import { Effect, Result } from "effect"
import { maxCleanupFailures, type Runtime, type Step } from "./Runtime.ts"

/**
 * Deletes a provider batch's files at the provider (what the gateway uploaded, and what the
 * provider wrote for the job): once the provider batch is done, or, by the retention sweep,
 * once it is older than the batch files' retention whatever it stands at. A deletion that keeps
 * failing is given up after a few tries, and said so in the log.
 */
export const cleanup = (run: Runtime, step: Pick<Step, "part" | "now" | "api" | "connection" | "later">) =>
  Effect.gen(function*() {
    const { part, now, api, connection } = step
    const input = part.upstream_file_id
    if (input === null) return yield* run.parts.cleaned(part, run.owner, now)
    const deleted = yield* Effect.result(api.cleanup(connection, input, part.upstream_batch_id ?? undefined))
    if (Result.isSuccess(deleted)) return yield* run.parts.cleaned(part, run.owner, now)
    const failures = part.failures + 1
    if (failures >= maxCleanupFailures) {
      yield* Effect.logWarning("provider batch: its files at the provider could not be deleted; given up").pipe(
        Effect.annotateLogs({ batch_id: part.batch_id, provider: part.provider, input, reason: deleted.failure.reason._tag })
      )
      return yield* run.parts.cleaned(part, run.owner, now)
    }
    return yield* step.later(Math.min(run.config.pollMs, 1_000 * 2 ** failures), { failures })
  })
