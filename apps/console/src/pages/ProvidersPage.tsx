import { Anchor, Badge, Stack, Table, Text, Title } from "@mantine/core"
import * as EndpointPrice from "../EndpointPrice.ts"
import * as EndpointStatus from "../EndpointStatus.ts"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { ScrollTable } from "../ScrollTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

const statusColor = { healthy: "teal", degraded: "orange", failing: "red", "failed recently": "orange", inactive: "gray" } as const

const percentiles = (p: { readonly p50: number; readonly p90: number; readonly p99: number } | null, format: (n: number) => string) =>
  p === null ? "-" : `${format(p.p50)} / ${format(p.p90)} / ${format(p.p99)}`

export const ProvidersPage = () => {
  const { client, isManagement } = useSession()
  const providers = useLoad(["providers", client], (signal) => client.providers.list(undefined, { signal }))
  const endpoints = useLoad(["endpoints", client], (signal) => EndpointStatus.load(client, signal))
  // Which providers this workspace brings its own credentials for (management keys only).
  const byok = useLoad(
    ["byok", client, isManagement],
    (signal) => (isManagement ? client.byok.list({ query: {} }, { signal }).then((list) => list.data) : Promise.resolve(undefined))
  )
  const ownKeys = (slug: string) => (byok.data ?? []).filter((key) => key.provider === slug && !key.disabled)

  return (
    <>
      <PageHeader
        title="Providers"
        description="Upstream providers, their endpoints and prices, and what this gateway measured of them in the last 30 minutes."
      />
      <Stack>
        <ErrorNotice error={providers.error ?? endpoints.error ?? byok.error} />
        <section aria-labelledby="providers-title">
          <Title order={2} size="h4" id="providers-title" mb="xs">Providers</Title>
          <ScrollTable label="Providers" minWidth={640}>
            <Table verticalSpacing="xs" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Provider</Table.Th>
                  <Table.Th scope="col">State</Table.Th>
                  <Table.Th scope="col">Data policy</Table.Th>
                  <Table.Th scope="col">Credentials</Table.Th>
                  <Table.Th scope="col">Status page</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {(providers.data?.data ?? []).map((provider) => {
                  const own = ownKeys(provider.slug)
                  return (
                    <Table.Tr key={provider.slug} data-provider={provider.slug}>
                      <Table.Td>
                        <Text size="sm" fw={500}>{provider.name}</Text>
                        <Text size="xs" c="dimmed" ff="monospace">{provider.slug}</Text>
                      </Table.Td>
                      <Table.Td style={{ whiteSpace: "nowrap" }}>
                        <Badge variant="light" color={provider.active ? "teal" : "gray"} styles={{ label: { overflow: "visible" } }}>{provider.active ? "active" : "inactive"}</Badge>
                      </Table.Td>
                      <Table.Td>
                        <Text size="sm">{provider.zdr ? "zero data retention" : "retains data"}</Text>
                        <Text size="xs" c="dimmed">{provider.data_collection === "deny" ? "no training on data" : "may collect data"}</Text>
                      </Table.Td>
                      <Table.Td>
                        {!isManagement ? "-" : own.length > 0
                          ? <Badge variant="light" color="indigo">your own key ({own[0]!.label})</Badge>
                          : <Text size="sm">the gateway's</Text>}
                      </Table.Td>
                      <Table.Td>
                        {provider.status_page_url === null ? "-" : <Anchor href={provider.status_page_url} underline="always" size="sm">status</Anchor>}
                      </Table.Td>
                    </Table.Tr>
                  )
                })}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        </section>
        <section aria-labelledby="endpoints-title">
          <Title order={2} size="h4" id="endpoints-title" mb="xs">Endpoints</Title>
          <ScrollTable label="Endpoints" minWidth={980}>
            <Table verticalSpacing="xs" striped>
              <Table.Caption>Latency in milliseconds and throughput in tokens per second are p50 / p90 / p99 of this gateway's calls.</Table.Caption>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Model</Table.Th>
                  <Table.Th scope="col">Provider</Table.Th>
                  <Table.Th scope="col">Health</Table.Th>
                  <Table.Th scope="col">Errors (30 min)</Table.Th>
                  <Table.Th scope="col">Latency</Table.Th>
                  <Table.Th scope="col">Throughput</Table.Th>
                  <Table.Th scope="col">Price</Table.Th>
                  <Table.Th scope="col">Precision</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {(endpoints.data ?? []).map((endpoint) => {
                  const status = EndpointStatus.statusLabel(endpoint)
                  return (
                    <Table.Tr key={`${endpoint.provider}:${endpoint.model}:${endpoint.tag}`} data-endpoint={`${endpoint.provider}:${endpoint.model}`}>
                      <Table.Td><Text size="sm" ff="monospace">{endpoint.model}</Text></Table.Td>
                      <Table.Td>{endpoint.provider_name}</Table.Td>
                      <Table.Td style={{ whiteSpace: "nowrap" }}><Badge variant="light" color={statusColor[status]} styles={{ label: { overflow: "visible" } }}>{status}</Badge></Table.Td>
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
              </Table.Tbody>
            </Table>
          </ScrollTable>
        </section>
      </Stack>
    </>
  )
}
