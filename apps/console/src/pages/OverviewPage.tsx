import { SimpleGrid, Stack, Text } from "@mantine/core"
import type { ActivityItem } from "@switchyard/core/schema/Activity"
import * as ActivitySeries from "../ActivitySeries.ts"
import * as BudgetWindows from "../BudgetWindows.ts"
import { CacheTable } from "../CacheTable.tsx"
import { DailyChart } from "../ChartCard.tsx"
import * as Credits from "../Credits.ts"
import { FailuresTable } from "../FailuresTable.tsx"
import * as Format from "../Format.ts"
import { LatencyTable } from "../LatencyTable.tsx"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { useSession } from "../SessionContext.ts"
import { StatCard } from "../StatCard.tsx"
import { useLoad } from "../useLoad.ts"
import { useWorkspaceChoice } from "../WorkspaceChoice.tsx"

const chartDays = 14
const keysCharted = 6

const utcToday = () => new Date().toISOString().slice(0, 10)

const OwnKey = () => {
  const { key } = useSession()
  if (key === null) return null
  return (
    <Stack>
    <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
      <StatCard label="Spent today" value={Format.money(key.usage_daily)} hint="UTC day" />
      <StatCard label="Spent this month" value={Format.money(key.usage_monthly)} />
      <StatCard
        label="Limit left"
        value={key.limit === null ? "no limit" : Format.money(key.limit_remaining)}
        hint={key.limit === null ? undefined : `of ${Format.money(key.limit)}, resets ${key.limit_reset ?? "never"}`}
      />
      <StatCard
        label="Rate limit"
        value={key.rate_limit.requests < 0 ? "none" : `${key.rate_limit.requests} per ${key.rate_limit.interval}`}
        hint={key.rate_limit.note}
      />
    </SimpleGrid>
    <LatencyTable />
    </Stack>
  )
}

const Workspace = ({ workspaceId }: { readonly workspaceId: string }) => {
  const { client, person, access } = useSession()
  const today = utcToday()
  // A key's overview is its own workspace's (the gateway's default for the key); a person's names it.
  const scope = person === null ? {} : { workspace_id: workspaceId }
  const activity = useLoad(["activity", client, workspaceId], (signal) => client.activity.activity({ query: scope }, { signal }))
  const credits = useLoad(["credits", client, workspaceId], (signal) => client.credits.get({ query: scope }, { signal }))
  const budgets = useLoad(
    ["budgets", client, workspaceId, access.seeBudgets],
    (signal) =>
      access.seeBudgets
        ? client.workspaces.listBudgets({ params: { workspace_ref: workspaceId } }, { signal })
        : Promise.resolve({ data: [], include_byok_in_budgets: false })
  )
  // The activity of each of the keys that spent most this month, tagged with the key's name (for
  // those who may see the keys).
  const seesKeys = access.pages.includes("keys")
  const perKey = useLoad(["activity-by-key", client, workspaceId, seesKeys], async (signal) => {
    if (!seesKeys) return []
    const { data } = await client.keys.list({ query: { include_disabled: true, ...scope } }, { signal })
    const top = [...data].filter((k) => k.usage_monthly > 0).sort((a, b) => b.usage_monthly - a.usage_monthly).slice(0, keysCharted)
    const pages = await Promise.all(top.map((k) => client.activity.activity({ query: { api_key_hash: k.hash } }, { signal })))
    return pages.flatMap((page, i) => page.data.map((row): ActivityItem & { readonly key: string } => ({ ...row, key: top[i]!.name })))
  })

  const rows = activity.data?.data ?? []
  const spendByModel = ActivitySeries.byDay(rows, { today, days: chartDays, measure: "usage", groupOf: (row) => row.model })
  const requestsByProvider = ActivitySeries.byDay(rows, { today, days: chartDays, measure: "requests", groupOf: (row) => row.provider_name })
  const keyRows = perKey.data ?? []
  const spendByKey = ActivitySeries.byDay(keyRows, { today, days: chartDays, measure: "usage", groupOf: (row) => (row as { key?: string }).key ?? "?" })

  const creditsLeft = Credits.left(credits.data?.data)
  const budgetLeft = (budgets.data?.data ?? []).map((budget) => {
    const interval = budget.reset_interval ?? "lifetime"
    const spent = BudgetWindows.spentIn(interval, {
      today,
      activity: rows,
      includeByok: budgets.data?.include_byok_in_budgets ?? false,
      lifetimeUsage: credits.data?.data.total_usage ?? 0
    })
    return { interval, limit: budget.limit_usd, left: Math.max(0, budget.limit_usd - spent) }
  }).sort((a, b) => a.left - b.left)[0]

  const money = (value: number) => Format.money(value)
  return (
    <Stack>
      <ErrorNotice error={activity.error ?? credits.error ?? budgets.error ?? perKey.error} />
      <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
        <StatCard label="Spent today" value={Format.money(ActivitySeries.total(rows, "usage", today))} hint="UTC day so far" />
        <StatCard label="Requests today" value={Format.integer(ActivitySeries.total(rows, "requests", today))} hint={`${Format.integer(ActivitySeries.total(rows, "requests"))} in 30 days`} />
        <StatCard label="Credits left" value={creditsLeft.value} hint={creditsLeft.hint} />
        {access.seeBudgets && (
          <StatCard
            label="Budget left"
            value={budgetLeft === undefined ? "no budget" : Format.money(budgetLeft.left)}
            hint={budgetLeft === undefined
              ? access.manageWorkspace(workspaceId) ? "set one under Workspaces and budgets" : "none is set"
              : `${budgetLeft.interval} budget of ${Format.money(budgetLeft.limit)}`}
          />
        )}
      </SimpleGrid>
      <SimpleGrid cols={{ base: 1, lg: 2 }}>
        <DailyChart id="spend-by-model" title="Spend per day by model" series={spendByModel} format={money} tick={Format.moneyTick} empty="No spend in the last two weeks." />
        <DailyChart
          id="requests-by-provider"
          title="Requests per day by provider"
          series={requestsByProvider}
          format={(value) => Format.integer(value)}
          tick={Format.countTick}
          integers
          empty="No requests in the last two weeks."
        />
        {seesKeys && (
          <DailyChart id="spend-by-key" title="Spend per day by key" series={spendByKey} format={money} tick={Format.moneyTick} empty="No key spent anything this month." />
        )}
      </SimpleGrid>
      {access.seeProviderHealth && <LatencyTable />}
      <CacheTable rows={rows} />
      <FailuresTable workspaceId={person === null ? undefined : workspaceId} />
    </Stack>
  )
}

const People = () => {
  const choice = useWorkspaceChoice()
  return (
    <>
      <PageHeader title="Overview" description="A workspace over the last two weeks (UTC days).">{choice.picker}</PageHeader>
      <ErrorNotice error={choice.error} />
      {choice.id === null
        ? <Text c="dimmed" size="sm">No workspace to show.</Text>
        : <Workspace key={choice.id} workspaceId={choice.id} />}
    </>
  )
}

export const OverviewPage = () => {
  const session = useSession()
  if (session.key === null) return <People />
  return (
    <>
      <PageHeader
        title="Overview"
        description={session.isManagement ? "Your default workspace over the last two weeks (UTC days)." : "This key's usage and limits."}
      />
      {session.isManagement ? <Workspace workspaceId={session.key.workspace_id} /> : <OwnKey />}
    </>
  )
}
