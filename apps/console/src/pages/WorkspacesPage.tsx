import { Badge, Button, Card, Group, NumberInput, Progress, Select, Stack, Switch, Table, Text, Title } from "@mantine/core"
import type { WorkspaceRecord } from "@switchyard/core/schema/Workspace"
import { useState } from "react"
import * as BudgetWindows from "../BudgetWindows.ts"
import * as Credits from "../Credits.ts"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { DataTable } from "../DataTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"
import { visibleTo } from "../WorkspaceChoice.tsx"

const intervals = [
  { value: "daily", label: "Daily" },
  { value: "weekly", label: "Weekly" },
  { value: "monthly", label: "Monthly" },
  { value: "lifetime", label: "Lifetime" }
]

/** The budgets' columns: the actions only for those who may change the workspace's budgets. */
const budgetColumns = (manages: boolean) => ["Budget", "Limit", "Spent", "Left", { when: manages, column: { actions: true } }] as const

/** Sets a budget of the workspace (replacing the one of the same interval). */
const BudgetForm = ({ workspace, onSaved, onError }: {
  readonly workspace: WorkspaceRecord
  readonly onSaved: () => void
  readonly onError: (error: unknown) => void
}) => {
  const { client } = useSession()
  const [interval, setInterval] = useState<BudgetWindows.Interval>("monthly")
  const [limit, setLimit] = useState<number | string>("")
  const [busy, setBusy] = useState(false)

  const save = (event: React.FormEvent) => {
    event.preventDefault()
    setBusy(true)
    onError(null)
    client.workspaces.setBudget({ params: { workspace_ref: workspace.id, interval }, payload: { limit_usd: Number(limit) } })
      .then(() => {
        setLimit("")
        onSaved()
      }, onError)
      .finally(() => setBusy(false))
  }

  return (
    <form onSubmit={save} aria-label={`Set a budget of ${workspace.name}`}>
      <Group align="flex-end" wrap="wrap">
        <Select
          label="Interval"
          data={intervals}
          allowDeselect={false}
          value={interval}
          onChange={(value) => setInterval((value ?? "monthly") as BudgetWindows.Interval)}
          w={140}
        />
        <NumberInput label="Limit (USD)" min={0} decimalScale={2} value={limit} onChange={setLimit} required w={160} />
        <Button type="submit" loading={busy} variant="light">Set budget</Button>
      </Group>
    </form>
  )
}

const WorkspaceCard = ({ workspace, isDefault }: { readonly workspace: WorkspaceRecord; readonly isDefault: boolean }) => {
  const { client, access } = useSession()
  const manages = access.manageWorkspace(workspace.id)
  const today = new Date().toISOString().slice(0, 10)
  const figures = useLoad(["workspace-figures", client, workspace.id], async (signal) => {
    const [credits, budgets, activity] = await Promise.all([
      client.credits.get({ query: { workspace_id: workspace.id } }, { signal }),
      access.seeBudgets
        ? client.workspaces.listBudgets({ params: { workspace_ref: workspace.id } }, { signal })
        : Promise.resolve({ data: [], include_byok_in_budgets: false }),
      client.activity.activity({ query: { workspace_id: workspace.id } }, { signal })
    ])
    return { credits: credits.data, budgets, activity: activity.data }
  })
  const [error, setError] = useState<unknown>(null)
  // The cache setting that applies, as the gateway last reported it.
  const [cache, setCache] = useState(workspace.cache)
  const [cacheBusy, setCacheBusy] = useState(false)

  const switchCache = (on: boolean) => {
    setCacheBusy(true)
    setError(null)
    client.workspaces.update({ params: { id: workspace.id }, payload: { cache: on } })
      .then(({ data: updated }) => setCache(updated.cache), setError)
      .finally(() => setCacheBusy(false))
  }

  const remove = (which: BudgetWindows.Interval) => {
    setError(null)
    client.workspaces.deleteBudget({ params: { workspace_ref: workspace.id, interval: which } }).then(figures.reload, setError)
  }

  const data = figures.data
  const budgets = (data?.budgets.data ?? []).map((budget) => {
    const which: BudgetWindows.Interval = budget.reset_interval ?? "lifetime"
    const spent = data === undefined ? 0 : BudgetWindows.spentIn(which, {
      today,
      activity: data.activity,
      includeByok: data.budgets.include_byok_in_budgets,
      lifetimeUsage: data.credits.total_usage
    })
    return { budget, which, spent }
  })

  return (
    <Card withBorder component="section" aria-labelledby={`ws-${workspace.id}`}>
      <Stack gap="sm">
        <Group justify="space-between" wrap="wrap">
          <div>
            <Group gap="xs">
              <Title order={2} size="h4" id={`ws-${workspace.id}`}>{workspace.name}</Title>
              {isDefault && <Badge variant="light">default</Badge>}
            </Group>
            <Text size="xs" c="dimmed" ff="monospace">{workspace.slug} · {workspace.id}</Text>
            {workspace.description !== null && <Text size="sm">{workspace.description}</Text>}
          </div>
          <div>
            <Text size="xs" tt="uppercase" fw={700} c="dimmed">Credits left</Text>
            <Text fw={700} size="lg">{Credits.left(data?.credits).value}</Text>
          </div>
        </Group>
        <ErrorNotice error={figures.error ?? error} />
        <Switch
          label="Embeddings cache"
          description={cache
            ? "On: inputs this workspace embedded before are answered from the cache and cost nothing."
            : "Off: every embeddings input goes to a provider."}
          checked={cache}
          disabled={!manages || cacheBusy}
          onChange={(event) => switchCache(event.currentTarget.checked)}
          aria-label={`Embeddings cache of ${workspace.name}`}
        />
        {!access.seeBudgets ? null : budgets.length === 0
          ? <Text size="sm" c="dimmed">{Credits.withoutBudgets(data?.credits)}</Text>
          : (
            <DataTable
              label={`Budgets of ${workspace.name}`}
              minWidth={520}
              columns={budgetColumns(manages)}
              aria-label={`Budgets of ${workspace.name}`}
            >
              {budgets.map(({ budget, which, spent }) => {
                const used = budget.limit_usd === 0 ? 1 : Math.min(1, spent / budget.limit_usd)
                return (
                  <Table.Tr key={budget.id} data-budget={which}>
                    <Table.Td>{which}</Table.Td>
                    <Table.Td>{Format.money(budget.limit_usd)}</Table.Td>
                    <Table.Td miw={140}>
                      {Format.money(spent)}
                      <Progress
                        value={used * 100}
                        color={used >= 0.9 ? "red.8" : used >= 0.7 ? "orange.8" : "teal.8"}
                        size="sm"
                        mt={4}
                        aria-label={`${which} budget used: ${Format.percent(used)}`}
                      />
                    </Table.Td>
                    <Table.Td>{Format.money(Math.max(0, budget.limit_usd - spent))}</Table.Td>
                    {manages && (
                      <Table.Td>
                        <Button size="compact-sm" variant="subtle" color="red" onClick={() => remove(which)} aria-label={`Remove the ${which} budget of ${workspace.name}`}>
                          Remove
                        </Button>
                      </Table.Td>
                    )}
                  </Table.Tr>
                )
              })}
            </DataTable>
          )}
        {manages && <BudgetForm workspace={workspace} onSaved={figures.reload} onError={setError} />}
      </Stack>
    </Card>
  )
}

export const WorkspacesPage = () => {
  const session = useSession()
  const { client, key } = session
  const workspaces = useLoad(["workspaces", client], (signal) => client.workspaces.list({ query: {} }, { signal }))
  return (
    <>
      <PageHeader
        title="Workspaces and budgets"
        description="Your workspaces, their credits and their budgets; spend counts UTC days, weeks from Monday, months from the 1st."
      />
      <ErrorNotice error={workspaces.error} />
      <Stack>
        {visibleTo(session, workspaces.data?.data ?? []).map((workspace) => (
          <WorkspaceCard key={workspace.id} workspace={workspace} isDefault={workspace.id === key?.workspace_id} />
        ))}
      </Stack>
    </>
  )
}
