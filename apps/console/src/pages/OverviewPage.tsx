import { BarChart } from "@mantine/charts"
import { SimpleGrid, Stack, Text, Title } from "@mantine/core"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { useSession } from "../SessionContext.ts"
import { StatCard } from "../StatCard.tsx"
import { useLoad } from "../useLoad.ts"

const OwnKey = () => {
  const { key } = useSession()
  return (
    <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }}>
      <StatCard label="Spent today" value={Format.money(key.usage_daily)} hint="UTC day" />
      <StatCard label="Spent this month" value={Format.money(key.usage_monthly)} />
      <StatCard
        label="Limit left"
        value={key.limit === null ? "no limit" : Format.money(key.limit_remaining)}
        hint={key.limit === null ? undefined : `of ${Format.money(key.limit)}, resets ${key.limit_reset ?? "never"}`}
      />
      <StatCard label="Rate limit" value={`${key.rate_limit.requests} / ${key.rate_limit.interval}`} hint={key.rate_limit.note} />
    </SimpleGrid>
  )
}

const Workspace = () => {
  const { client } = useSession()
  const credits = useLoad(() => client.credits.get({ query: {} }), [client])
  const keys = useLoad(() => client.keys.list({ query: { include_disabled: true } }), [client])
  const byKey = (keys.data?.data ?? [])
    .filter((record) => record.usage > 0)
    .map((record) => ({ key: record.name, today: record.usage_daily, month: record.usage_monthly, total: record.usage }))
  const left = credits.data === undefined ? undefined : credits.data.data.total_credits - credits.data.data.total_usage
  return (
    <Stack>
      <ErrorNotice error={credits.error ?? keys.error} />
      <SimpleGrid cols={{ base: 1, xs: 2, md: 3 }}>
        <StatCard label="Credits left" value={Format.money(left)} hint="prepaid credits minus usage" />
        <StatCard label="Credits added" value={Format.money(credits.data?.data.total_credits)} />
        <StatCard label="Credits used" value={Format.money(credits.data?.data.total_usage)} />
      </SimpleGrid>
      <section aria-labelledby="spend-by-key">
        <Title order={2} size="h4" id="spend-by-key" mb="xs">Spend by key</Title>
        {byKey.length === 0
          ? <Text c="dimmed" size="sm">No key has spent anything yet.</Text>
          : (
            <BarChart
              h={260}
              data={byKey}
              dataKey="key"
              valueFormatter={(value) => Format.money(value)}
              withLegend
              series={[
                { name: "today", label: "Today", color: "indigo.6" },
                { name: "month", label: "This month", color: "teal.6" },
                { name: "total", label: "All time", color: "gray.6" }
              ]}
            />
          )}
      </section>
    </Stack>
  )
}

export const OverviewPage = () => {
  const session = useSession()
  return (
    <>
      <PageHeader title="Overview" description={session.isManagement ? "Your workspace's spend, credits and keys." : "This key's usage and limits."} />
      {session.isManagement ? <Workspace /> : <OwnKey />}
    </>
  )
}
