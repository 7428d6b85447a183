import type { ActivityItem } from "@switchyard/core/schema/Activity"

export type Interval = "daily" | "weekly" | "monthly" | "lifetime"

/**
 * The first UTC day of the budget window that holds `today`: today, the Monday of this week, the
 * 1st of this month; `undefined` for the lifetime budget (no window).
 */
export const windowStart = (interval: Interval, today: string): string | undefined => {
  switch (interval) {
    case "daily":
      return today
    case "weekly": {
      const date = new Date(`${today}T00:00:00Z`)
      const sinceMonday = (date.getUTCDay() + 6) % 7
      return new Date(date.getTime() - sinceMonday * 86_400_000).toISOString().slice(0, 10)
    }
    case "monthly":
      return `${today.slice(0, 8)}01`
    case "lifetime":
      return undefined
  }
}

/**
 * What a workspace spent in a budget's current window, from its daily activity (which covers at
 * least the last 30 days, so every window but the lifetime one); the lifetime figure is the
 * workspace's all-time credit usage plus, when budgets count it, the BYOK usage of the activity.
 */
export const spentIn = (
  interval: Interval,
  options: {
    readonly today: string
    readonly activity: ReadonlyArray<ActivityItem>
    readonly includeByok: boolean
    readonly lifetimeUsage: number
  }
): number => {
  const from = windowStart(interval, options.today)
  const rows = options.activity.filter((row) => from === undefined || (row.date >= from && row.date <= options.today))
  const byok = options.includeByok ? rows.reduce((sum, row) => sum + row.byok_usage_inference, 0) : 0
  if (from === undefined) return options.lifetimeUsage + byok
  return rows.reduce((sum, row) => sum + row.usage, 0) + byok
}
