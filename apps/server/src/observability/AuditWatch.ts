/**
 * The audit log's chain, checked without anyone asking: once the gateway starts and every
 * `SWITCHYARD_AUDIT_VERIFY_S` (default 300), each time the whole chain (an old entry changed by
 * hand is found as surely as a new one; management actions are few, and a round is bounded in
 * time). A break is logged as an error naming the first broken entry, sets
 * `switchyard_audit_chain_ok` to 0, marks `/api/v1/health` `degraded` (serving goes on) and flags
 * the entries from the break on in `GET /audit-log` (`"verified": false`); a restored table
 * clears it at the next round.
 */
import type { AuditVerification } from "@switchyard/core/schema/Audit"
import { Config, Context, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { AuditLog, start } from "../store/audit/AuditLog.ts"
import { GatewayMetrics } from "./GatewayMetrics.ts"

/** What the last check found. */
export interface Integrity {
  /** `unchecked` until the first check ends. */
  readonly state: "unchecked" | "ok" | "broken"
  /** The first entry found broken, while `broken`. */
  readonly firstBroken?: NonNullable<AuditVerification["first_broken"]>
  /** The last entry found whole. */
  readonly through: number
}

export class AuditIntegrity extends Context.Service<AuditIntegrity, { readonly current: () => Integrity }>()(
  "@switchyard/server/observability/AuditWatch/AuditIntegrity"
) {
  /** The watch itself: a round at start, then one every interval, in the background. */
  static readonly layer = Layer.effect(
    AuditIntegrity,
    Effect.suspend(() => watch)
  )
}

const AuditWatchConfig = Config.schema(
  Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 86_400 })),
  "SWITCHYARD_AUDIT_VERIFY_S"
).pipe(Config.withDefault(300))

/** How long one check of the chain may take before it is left for the next round. */
const roundBound = Duration.seconds(30)

const watch = Effect.gen(function*() {
    const audit = yield* AuditLog
    const metrics = yield* GatewayMetrics
    const intervalSeconds = yield* AuditWatchConfig
    let integrity: Integrity = { state: "unchecked", through: 0 }

    const check = Effect.gen(function*() {
      const result = yield* audit.verifyFrom(start)
      if (result.ok) {
        if (integrity.state === "broken") yield* Effect.logInfo("audit log: the chain is whole again")
        integrity = { state: "ok", through: result.through.id }
        metrics.auditChain(true)
        return
      }
      const broken = result.first_broken!
      if (integrity.state !== "broken" || integrity.firstBroken?.id !== broken.id) {
        yield* Effect.logError(
          `audit log: the chain is broken at entry ${broken.id} (${broken.reason}): that entry or one before it was changed or removed outside the gateway`
        ).pipe(Effect.annotateLogs({ audit_entry: broken.id, reason: broken.reason }))
      }
      integrity = { state: "broken", firstBroken: broken, through: result.through.id }
      metrics.auditChain(false)
    }).pipe(
      Effect.catch((error) => Effect.logWarning("audit log: the chain could not be checked now", error))
    )

    // A round at once, then one every interval, each bounded in time: in the background, so a
    // long chain delays neither the start nor a request.
    const round = check.pipe(
      Effect.timeoutOrElse({
        duration: roundBound,
        orElse: () => Effect.logWarning(`audit log: a check of the chain took over ${Duration.toSeconds(roundBound)} s; it is tried again at the next round`)
      })
    )
    yield* round.pipe(Effect.repeat(Schedule.spaced(Duration.seconds(intervalSeconds))), Effect.forkScoped)
    return AuditIntegrity.of({ current: () => integrity })
  })
