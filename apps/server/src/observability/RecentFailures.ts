import type { FailureRecord } from "@switchyard/core/schema/Activity"
import { Context, Layer } from "effect"

/**
 * The model calls this process answered with an error, most recent last, for the console's list
 * of recent failures (`GET /activity/failures`). Kept in memory only, at most {@link capacity}
 * across all workspaces: each replica lists what it answered itself, and a restart forgets.
 */
export interface RecentFailuresShape {
  /** Keeps a failure, numbered in this process. */
  readonly add: (workspaceId: string, failure: Omit<FailureRecord, "id">) => void
  /** The workspace's failures, newest first, at most `limit`. */
  readonly of: (workspaceId: string, limit: number) => ReadonlyArray<FailureRecord>
}

const capacity = 1_000

export class RecentFailures extends Context.Service<RecentFailures, RecentFailuresShape>()(
  "@switchyard/server/observability/RecentFailures"
) {
  static readonly layer = Layer.sync(RecentFailures, () => {
    // A ring: `next` is where the next failure goes, over the oldest once full.
    const ring: Array<{ readonly workspaceId: string; readonly failure: FailureRecord }> = []
    let next = 0
    let numbered = 0
    return RecentFailures.of({
      add: (workspaceId, failure) => {
        const entry = { workspaceId, failure: { id: ++numbered, ...failure } }
        if (ring.length < capacity) ring.push(entry)
        else ring[next] = entry
        next = (next + 1) % capacity
      },
      of: (workspaceId, limit) => {
        const found: Array<FailureRecord> = []
        for (let i = 1; i <= ring.length && found.length < limit; i++) {
          const entry = ring[(next - i + ring.length) % ring.length]!
          if (entry.workspaceId === workspaceId) found.push(entry.failure)
        }
        return found
      }
    })
  })
}
