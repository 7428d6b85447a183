import { Alert, Anchor, Badge, Button, Group, Menu, Stack, Table, Text, Title, VisuallyHidden } from "@mantine/core"
import type { ProviderTestResult } from "@switchyard/core/catalog/ManagedProvider"
import type { ProviderRecord } from "@switchyard/core/schema/ProviderListing"
import { useState } from "react"
import * as EndpointPrice from "../EndpointPrice.ts"
import * as EndpointStatus from "../EndpointStatus.ts"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { AddProviderModal, DeleteProviderModal, EditProviderModal, RotateKeyModal, TestResults } from "../ProviderAdmin.tsx"
import * as ProviderDraft from "../ProviderDraft.ts"
import { serverMessage } from "../ServerMessage.ts"
import { ScrollTable } from "../ScrollTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

const statusColor = { healthy: "teal", degraded: "orange", failing: "red", "failed recently": "orange", inactive: "gray" } as const

const percentiles = (p: { readonly p50: number; readonly p90: number; readonly p99: number } | null, format: (n: number) => string) =>
  p === null ? "-" : `${format(p.p50)} / ${format(p.p90)} / ${format(p.p99)}`

type Dialog =
  | { readonly _tag: "Add" }
  | { readonly _tag: "Edit"; readonly slug: string }
  | { readonly _tag: "Rotate"; readonly provider: ProviderRecord }
  | { readonly _tag: "Delete"; readonly provider: ProviderRecord }

const stateOf = (provider: ProviderRecord) =>
  provider.enabled === false
    ? { label: "disabled", color: "gray" }
    : provider.active
    ? { label: "active", color: "teal" }
    : { label: "inactive", color: "gray" }

export const ProvidersPage = () => {
  const { client, access, person } = useSession()
  const ownProviderKeys = access.seeOwnProviderKeys
  const providers = useLoad(["providers", client], (signal) => client.providers.list(undefined, { signal }))
  const endpoints = useLoad(["endpoints", client], (signal) => EndpointStatus.load(client, signal, person !== null))
  // Which providers this workspace brings its own credentials for (management keys only).
  const byok = useLoad(
    ["byok", client, ownProviderKeys],
    (signal) => (ownProviderKeys ? client.byok.list({ query: {} }, { signal }).then((list) => list.data) : Promise.resolve(null))
  )
  const ownKeys = (slug: string) => (byok.data ?? []).filter((key) => key.provider === slug && !key.disabled)
  const list = providers.data?.data ?? []
  // The gateway adds `source` (and the upstream key's whereabouts) to each provider for those who
  // may see the instance's providers whole; of them, those the access rule lets change providers
  // get the actions.
  const detailed = list.some((provider) => provider.source !== undefined)
  const administrator = detailed && access.manageProviders
  // Providers' health is for everyone who oversees the gateway: administrators and people.
  const showHealth = detailed || person !== null
  const [dialog, setDialog] = useState<Dialog | null>(null)
  const [notice, setNotice] = useState<{ readonly ok: boolean; readonly text: string } | null>(null)
  const [testing, setTesting] = useState<string | null>(null)
  const [tested, setTested] = useState<{ readonly name: string; readonly result: ProviderTestResult["data"] } | null>(null)

  const reload = () => {
    providers.reload()
    endpoints.reload()
  }
  const done = (text: string) => {
    setDialog(null)
    setNotice({ ok: true, text })
    reload()
  }
  const setEnabled = (provider: ProviderRecord, enabled: boolean) => {
    setNotice(null)
    client.providerAdmin.update({ params: { slug: provider.slug }, payload: { enabled } }).then(
      () => done(enabled ? `Enabled ${provider.name}.` : `Disabled ${provider.name}: no request is routed to it.`),
      (error: unknown) => setNotice({ ok: false, text: `${provider.name}: ${serverMessage(error)}` })
    )
  }
  const test = (provider: ProviderRecord) => {
    setNotice(null)
    setTested(null)
    setTesting(provider.slug)
    client.providerAdmin.test({ params: { slug: provider.slug } }).then(
      (answer) => setTested({ name: provider.name, result: answer.data }),
      (error: unknown) => setNotice({ ok: false, text: `${provider.name}: ${serverMessage(error)}` })
    ).finally(() => setTesting(null))
  }

  const health = (slug: string) => {
    const found = EndpointStatus.providerHealth(endpoints.data ?? [], slug)
    if (found === undefined) return <Text size="sm">-</Text>
    return (
      <>
        <Badge variant="light" color={statusColor[found.label]} styles={{ label: { overflow: "visible" } }}>{found.label}</Badge>
        {found.of > 1 && <Text size="xs" c="dimmed">{`${found.count} of ${found.of} endpoints`}</Text>}
      </>
    )
  }

  const actions = (provider: ProviderRecord) => (
    <Group gap={6} wrap="nowrap">
      <Button
        size="compact-sm"
        variant="default"
        loading={testing === provider.slug}
        onClick={() => test(provider)}
        aria-label={`Test ${provider.name}`}
      >
        Test
      </Button>
      {provider.source === "api"
        ? (
          <Menu position="bottom-end" withinPortal>
            <Menu.Target>
              <Button size="compact-sm" variant="light" aria-label={`Manage ${provider.name}`}>Manage</Button>
            </Menu.Target>
            <Menu.Dropdown>
              <Menu.Item onClick={() => setDialog({ _tag: "Edit", slug: provider.slug })}>Edit</Menu.Item>
              <Menu.Item onClick={() => setDialog({ _tag: "Rotate", provider })}>Rotate key</Menu.Item>
              <Menu.Item onClick={() => setEnabled(provider, provider.enabled === false)}>
                {provider.enabled === false ? "Enable" : "Disable"}
              </Menu.Item>
              <Menu.Divider />
              <Menu.Item color="red" onClick={() => setDialog({ _tag: "Delete", provider })}>Delete</Menu.Item>
            </Menu.Dropdown>
          </Menu>
        )
        : <Text size="xs" c="dimmed">read-only</Text>}
    </Group>
  )

  return (
    <>
      <PageHeader
        title="Providers"
        description={administrator
          ? "Upstream providers, their endpoints and prices, and what this gateway measured of them in the last 30 minutes. Providers of the config file are read-only here; those added here route on every replica within a second."
          : "Upstream providers, their endpoints and prices, and what this gateway measured of them in the last 30 minutes."}
      >
        {administrator && <Button onClick={() => setDialog({ _tag: "Add" })}>Add provider</Button>}
      </PageHeader>
      <Stack>
        <ErrorNotice error={providers.error ?? endpoints.error ?? byok.error} />
        {notice !== null && (
          <Alert color={notice.ok ? "teal" : "red"} role={notice.ok ? "status" : "alert"} withCloseButton onClose={() => setNotice(null)}>
            {notice.text}
          </Alert>
        )}
        <section aria-labelledby="providers-title">
          <Title order={2} size="h4" id="providers-title" mb="xs">Providers</Title>
          <ScrollTable label="Providers" minWidth={detailed ? 940 : 640}>
            <Table verticalSpacing="xs" horizontalSpacing={detailed ? 8 : "sm"} striped aria-busy={providers.loading}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Provider</Table.Th>
                  {detailed && <Table.Th scope="col">Source</Table.Th>}
                  <Table.Th scope="col">State</Table.Th>
                  {showHealth && <Table.Th scope="col">Health</Table.Th>}
                  <Table.Th scope="col">Data policy</Table.Th>
                  {detailed && <Table.Th scope="col">Upstream key</Table.Th>}
                  <Table.Th scope="col">{detailed ? "Workspace key" : "Credentials"}</Table.Th>
                  {!detailed && <Table.Th scope="col">Status page</Table.Th>}
                  {administrator && <Table.Th scope="col"><VisuallyHidden>Actions</VisuallyHidden></Table.Th>}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {list.map((provider) => {
                  const own = ownKeys(provider.slug)
                  const state = stateOf(provider)
                  return (
                    <Table.Tr key={provider.slug} data-provider={provider.slug} data-source={provider.source}>
                      <Table.Td>
                        <Text size="sm" fw={500}>{provider.name}</Text>
                        <Text size="xs" c="dimmed" ff="monospace">{provider.slug}</Text>
                        {detailed && provider.status_page_url !== null && (
                          <Anchor href={provider.status_page_url} underline="always" size="xs">status page</Anchor>
                        )}
                      </Table.Td>
                      {detailed && (
                        <Table.Td>
                          <Badge variant="outline" color={provider.source === "api" ? "indigo" : "gray"} tt="none" styles={{ label: { overflow: "visible" } }}>
                            {provider.source}
                          </Badge>
                        </Table.Td>
                      )}
                      <Table.Td style={{ whiteSpace: "nowrap" }}>
                        <Badge variant="light" color={state.color} styles={{ label: { overflow: "visible" } }}>{state.label}</Badge>
                      </Table.Td>
                      {showHealth && <Table.Td style={{ whiteSpace: "nowrap" }}>{health(provider.slug)}</Table.Td>}
                      <Table.Td>
                        <Text size="sm">{provider.zdr ? "zero data retention" : "retains data"}</Text>
                        <Text size="xs" c="dimmed">{provider.data_collection === "deny" ? "no training on data" : "may collect data"}</Text>
                      </Table.Td>
                      {detailed && <Table.Td><Text size="sm">{ProviderDraft.credential(provider.api_key)}</Text></Table.Td>}
                      <Table.Td>
                        {!ownProviderKeys ? "-" : own.length > 0
                          ? <Badge variant="light" color="indigo">your own key ({own[0]!.label})</Badge>
                          : <Text size="sm">the gateway's</Text>}
                      </Table.Td>
                      {!detailed && (
                        <Table.Td>
                          {provider.status_page_url === null ? "-" : <Anchor href={provider.status_page_url} underline="always" size="sm">status</Anchor>}
                        </Table.Td>
                      )}
                      {administrator && <Table.Td>{actions(provider)}</Table.Td>}
                    </Table.Tr>
                  )
                })}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        </section>
        {tested !== null && <TestResults name={tested.name} result={tested.result} onClose={() => setTested(null)} />}
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
      <AddProviderModal
        opened={dialog?._tag === "Add"}
        onClose={() => setDialog(null)}
        onAdded={(slug) => done(`Added ${slug}: it routes now.`)}
      />
      {dialog?._tag === "Edit" && (
        <EditProviderModal
          slug={dialog.slug}
          onClose={() => setDialog(null)}
          onSaved={(changed) => done(changed === 0 ? `Nothing changed in ${dialog.slug}.` : `Saved ${dialog.slug}.`)}
        />
      )}
      {dialog?._tag === "Rotate" && <RotateKeyModal provider={dialog.provider} onClose={() => setDialog(null)} onSaved={done} />}
      {dialog?._tag === "Delete" && (
        <DeleteProviderModal provider={dialog.provider} onClose={() => setDialog(null)} onDeleted={() => done(`Deleted ${dialog.provider.name}.`)} />
      )}
    </>
  )
}
