import { Api } from "@switchyard/core/api/Api"
import { creditsFromNanos, nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { BadRequest } from "@switchyard/core/schema/ApiError"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import type { CreditTotals } from "@switchyard/core/store/Accounting"
import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { refuseNul } from "../http/NulCharacters.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import { requireManagement, resolveWorkspace } from "./Management.ts"
import * as StoreFailure from "../http/StoreFailure.ts"

const maxGrantNanos = 1_000_000_000n * 1_000_000_000n

const toWire = (totals: CreditTotals) => ({
  data: {
    total_credits: creditsFromNanos(totals.totalCreditsNanos),
    total_usage: creditsFromNanos(totals.totalUsageNanos)
  }
})

export const CreditsHandlers = HttpApiBuilder.group(
  Api,
  "credits",
  Effect.fn(function*(handlers) {
    const accounting = yield* Accounting
    const keys = yield* ApiKeyStore
    const audit = yield* AuditLog
    return handlers
      .handle("get", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          const workspaceId = yield* resolveWorkspace(keys, query.workspace_id, caller.workspaceId)
          return toWire(yield* accounting.credits(workspaceId))
        })))
      .handle("add", ({ payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          yield* refuseNul(payload)
          const workspaceId = yield* resolveWorkspace(keys, payload.workspace_id, caller.workspaceId)
          const amount = nanosFromCredits(payload.amount)
          if (amount === undefined || amount <= 0n || amount > maxGrantNanos) {
            return yield* new BadRequest({
              message: "amount must be more than 0 and at most 1000000000 credits, with at most 9 fractional digits",
              metadata: { field: "amount" }
            })
          }
          return toWire(yield* audit.recorded(
            accounting.addCredits({ workspaceId, amountNanos: amount, note: payload.note ?? null, grantedByKeyId: caller.keyId }),
            (totals) => ({
              action: "credits.add",
              target: { type: "workspace", id: workspaceId },
              workspaceId,
              after: { amount: creditsFromNanos(amount), note: payload.note ?? null, total_credits: creditsFromNanos(totals.totalCreditsNanos) }
            })
          ))
        })))
  })
)
