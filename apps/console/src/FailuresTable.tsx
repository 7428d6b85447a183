import { Paper, Table, Text, Title } from "@mantine/core"
import * as Format from "./Format.ts"
import { ErrorNotice } from "./PageHeader.tsx"
import { DataTable } from "./DataTable.tsx"
import { useSession } from "./SessionContext.ts"
import { useLoad } from "./useLoad.ts"

/**
 * The workspace's (the key's own, or `workspaceId`) most recent failed model calls (`GET /activity/failures`): when, the status
 * answered, the model, the provider tried last, and why.
 */
export const FailuresTable = ({ workspaceId }: { readonly workspaceId?: string | undefined }) => {
  const { client } = useSession()
  const failures = useLoad(
    ["failures", client, workspaceId],
    (signal) => client.activity.failures({ query: workspaceId === undefined ? {} : { workspace_id: workspaceId } }, { signal })
  )
  const rows = failures.data?.data ?? []
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="failures-title">
      <Title order={2} size="h5" id="failures-title" mb="sm">Recent failed requests</Title>
      <ErrorNotice error={failures.error} />
      {rows.length === 0
        ? <Text c="dimmed" size="sm">No failed requests since this gateway process started.</Text>
        : (
          <DataTable label="Recent failed requests" minWidth={720} columns={["When", "Status", "Model", "Provider", "Reason"]} verticalSpacing={4}>
            {rows.map((f) => (
              <Table.Tr key={f.id} data-failure-provider={f.provider ?? ""}>
                <Table.Td style={{ whiteSpace: "nowrap" }}>{Format.dateTime(f.at)}</Table.Td>
                <Table.Td>{f.status}</Table.Td>
                <Table.Td><Text size="sm" ff="monospace">{f.model ?? "-"}</Text></Table.Td>
                <Table.Td>{f.provider ?? "-"}</Table.Td>
                <Table.Td>
                  <Text size="sm">{f.message}</Text>
                  {f.attempts.length > 0 && (
                    <Text size="xs" c="dimmed">
                      Tried: {f.attempts.map((a) => `${a.provider} (${a.outcome}${a.reason === null ? "" : `: ${a.reason}`})`).join(", ")}
                    </Text>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      <Text size="xs" c="dimmed" mt="xs">As this gateway process answered them; each replica keeps its own, and a restart forgets.</Text>
    </Paper>
  )
}
