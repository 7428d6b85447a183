import { Stack, Text } from "@mantine/core"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { useSession } from "../SessionContext.ts"
import { StatCard } from "../StatCard.tsx"
import { useLoad } from "../useLoad.ts"

export const WorkspacesPage = () => {
  const { client, key } = useSession()
  const credits = useLoad(() => client.credits.get({ query: {} }), [client])
  return (
    <>
      <PageHeader title="Workspaces and budgets" description="Your workspaces, their credits and budgets." />
      <Stack>
        <ErrorNotice error={credits.error} />
        <Text size="sm">Default workspace <Text span ff="monospace">{key.workspace_id}</Text></Text>
        <StatCard
          label="Credits left"
          value={Format.money(credits.data === undefined ? undefined : credits.data.data.total_credits - credits.data.data.total_usage)}
        />
      </Stack>
    </>
  )
}
