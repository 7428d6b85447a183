/**
 * The status and envelope of the money port's refusals: 402 for a limit that cannot pay (its
 * message says which scope, how much it has left and how to raise it), 401 for a key that stopped
 * working between authentication and the hold.
 *
 * @since 0.3.0
 */
import { creditsFromNanos } from "../accounting/UsageWindow.ts"
import type { Refused } from "../store/Accounting.ts"
import { PaymentRequired, Unauthorized } from "../schema/ApiError.ts"

const nanosPerCredit = 1_000_000_000n

/**
 * An exact dollar amount for messages: `$0.000123`, `$12.5`, `$0`.
 *
 * @since 0.3.0
 */
const dollars = (nanos: bigint): string => {
  const abs = nanos < 0n ? -nanos : nanos
  const fraction = (abs % nanosPerCredit).toString().padStart(9, "0").replace(/0+$/u, "")
  return `${nanos < 0n ? "-" : ""}$${abs / nanosPerCredit}${fraction === "" ? "" : `.${fraction}`}`
}

const windowNames: Record<string, string> = {
  daily: "today (UTC)",
  weekly: "this week (UTC, Monday to Sunday)",
  monthly: "this month (UTC)"
}

/**
 * @since 0.3.0
 */
export const refusalToApiError = (refused: Refused): PaymentRequired | Unauthorized => {
  const required = refused.requiredNanos
  const left = refused.remainingNanos === undefined || refused.remainingNanos < 0n ? 0n : refused.remainingNanos
  const limit = refused.limitNanos ?? 0n
  switch (refused.reason) {
    case "key_deleted":
      return new Unauthorized({ message: "This API key no longer exists" })
    case "key_disabled":
      return new Unauthorized({ message: "This API key is disabled" })
    case "key_expired":
      return new Unauthorized({ message: "This API key has expired" })
    case "key_limit": {
      const reset = refused.window ?? null
      const window = reset === null ? "" : ` ${windowNames[reset]}`
      return new PaymentRequired({
        message: `Insufficient key limit: this API key has ${dollars(left)} of its ${dollars(limit)} limit left${window}, and this request may cost up to ${dollars(required)}. Raise the key's limit with PATCH /api/v1/keys/{hash}.`,
        metadata: {
          reason: "key_limit",
          limit: creditsFromNanos(limit),
          limit_remaining: creditsFromNanos(left),
          limit_reset: reset,
          required: creditsFromNanos(required)
        }
      })
    }
    case "workspace_budget": {
      const interval = refused.window ?? "lifetime"
      return new PaymentRequired({
        message: `Insufficient workspace budget: the workspace's ${interval} budget of ${dollars(limit)} has ${dollars(left)} left${interval === "lifetime" ? "" : ` ${windowNames[interval]}`}, and this request may cost up to ${dollars(required)}. Raise it with PUT /api/v1/workspaces/{id}/budgets/${interval}.`,
        metadata: {
          reason: "workspace_budget",
          budget: interval,
          limit: creditsFromNanos(limit),
          limit_remaining: creditsFromNanos(left),
          required: creditsFromNanos(required)
        }
      })
    }
    case "workspace_credits":
      return new PaymentRequired({
        message: `Insufficient workspace credits: the workspace has ${dollars(left)} available and this request may cost up to ${dollars(required)}. An operator can add credits with POST /api/v1/credits.`,
        metadata: {
          reason: "workspace_credits",
          balance: creditsFromNanos(left),
          required: creditsFromNanos(required)
        }
      })
  }
}
