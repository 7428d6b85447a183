import { Table, Text } from "@mantine/core"
import { DataTable, StateBadge } from "./DataTable.tsx"
import * as EndpointPrice from "./EndpointPrice.ts"
import * as EndpointStatus from "./EndpointStatus.ts"
import * as Format from "./Format.ts"

/** The colour of each health the providers page shows, of a provider or of one endpoint. */
export const healthColor = { healthy: "teal", degraded: "orange", failing: "red", "failed recently": "orange", inactive: "gray" } as const

const percentiles = (p: { readonly p50: number; readonly p90: number; readonly p99: number } | null, format: (n: number) => string) =>
  p === null ? "-" : `${format(p.p50)} / ${format(p.p90)} / ${format(p.p99)}`

const columns = ["Model", "Provider", "Health", "Errors (30 min)", "Latency", "Throughput", "Price", "Precision"]

/**
 * Every endpoint of the catalog with what this gateway measured of it in the last 30 minutes:
 * health, error rate, latency and throughput percentiles, and its price in the unit charged.
 */
export const EndpointTable = ({ endpoints }: { readonly endpoints: ReadonlyArray<EndpointStatus.ServedEndpoint> }) => (
  <DataTable
    label="Endpoints"
    minWidth={980}
    columns={columns}
    caption="Latency in milliseconds and throughput in tokens per second are p50 / p90 / p99 of this gateway's calls."
    striped
  >
    {endpoints.map((endpoint) => {
      const status = EndpointStatus.statusLabel(endpoint)
      return (
        <Table.Tr key={`${endpoint.provider}:${endpoint.model}:${endpoint.tag}`} data-endpoint={`${endpoint.provider}:${endpoint.model}`}>
          <Table.Td><Text size="sm" ff="monospace">{endpoint.model}</Text></Table.Td>
          <Table.Td>{endpoint.provider_name}</Table.Td>
          <Table.Td style={{ whiteSpace: "nowrap" }}><StateBadge color={healthColor[status]}>{status}</StateBadge></Table.Td>
          <Table.Td>{Format.percent(EndpointStatus.errorRate(endpoint.uptime_last_30m))}</Table.Td>
          <Table.Td>{percentiles(endpoint.latency_last_30m, (n) => String(Math.round(n)))}</Table.Td>
          <Table.Td>{percentiles(endpoint.throughput_last_30m, (n) => String(Math.round(n)))}</Table.Td>
          <Table.Td>
            {EndpointPrice.describe(endpoint).map((part) => <Text size="sm" key={part} style={{ whiteSpace: "nowrap" }}>{part}</Text>)}
          </Table.Td>
          <Table.Td>{endpoint.quantization ?? "-"}</Table.Td>
        </Table.Tr>
      )
    })}
  </DataTable>
)
