import { Paper, Table, Text, Title } from "@mantine/core"
import * as EndpointStatus from "./EndpointStatus.ts"
import * as Format from "./Format.ts"
import { ErrorNotice } from "./PageHeader.tsx"
import { DataTable } from "./DataTable.tsx"
import { useSession } from "./SessionContext.ts"
import { useLoad } from "./useLoad.ts"

/**
 * Error rate and latency percentiles of every endpoint this gateway called in the last 30
 * minutes, as `GET /models/{author}/{slug}/endpoints` measures them.
 */
export const LatencyTable = () => {
  const { client, person } = useSession()
  const endpoints = useLoad(["endpoints", client], (signal) => EndpointStatus.load(client, signal, person !== null))
  const measured = (endpoints.data ?? []).filter((e) => e.uptime_last_30m !== null || e.latency_last_30m !== null)
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="latency-title">
      <Title order={2} size="h5" id="latency-title" mb="sm">Errors and latency by endpoint, last 30 minutes</Title>
      <ErrorNotice error={endpoints.error} />
      {measured.length === 0
        ? <Text c="dimmed" size="sm">No provider was called in the last 30 minutes.</Text>
        : (
          <DataTable label="Errors and latency by endpoint" minWidth={560} columns={["Provider", "Model", "Error rate", "p50", "p90", "p99"]} verticalSpacing={4}>
            {measured.map((e) => (
              <Table.Tr key={`${e.provider}:${e.model}:${e.tag}`} data-endpoint={`${e.provider}:${e.model}`}>
                <Table.Td>{e.provider_name}</Table.Td>
                <Table.Td><Text size="sm" ff="monospace">{e.model}</Text></Table.Td>
                <Table.Td>{Format.percent(EndpointStatus.errorRate(e.uptime_last_30m))}</Table.Td>
                <Table.Td>{Format.millis(e.latency_last_30m?.p50)}</Table.Td>
                <Table.Td>{Format.millis(e.latency_last_30m?.p90)}</Table.Td>
                <Table.Td>{Format.millis(e.latency_last_30m?.p99)}</Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
    </Paper>
  )
}
