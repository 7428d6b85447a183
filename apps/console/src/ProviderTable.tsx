import { Anchor, Badge, Button, Menu, Table, Text } from "@mantine/core"
import type { ProviderRecord } from "@switchyard/core/schema/ProviderListing"
import { DataTable, RowActions, RowButton, StateBadge } from "./DataTable.tsx"
import { healthColor } from "./EndpointTable.tsx"
import * as EndpointStatus from "./EndpointStatus.ts"
import * as ProviderDraft from "./ProviderDraft.ts"

/**
 * The providers of the catalog. Those who may see the instance's providers whole (`detailed`: an
 * instance administrator or viewer) see where each comes from and its upstream key; those who
 * oversee the gateway (`showHealth`) its health; those who may change providers (`administrator`)
 * what can be done to it; every viewer its state, data policy and whose credentials pay.
 */

/** What an administrator can do to a provider from its row. */
export interface ProviderActions {
  /** Which provider's test is running. */
  readonly testing: string | null
  readonly test: (provider: ProviderRecord) => void
  readonly edit: (provider: ProviderRecord) => void
  readonly rotate: (provider: ProviderRecord) => void
  readonly setEnabled: (provider: ProviderRecord, enabled: boolean) => void
  readonly remove: (provider: ProviderRecord) => void
}

const stateOf = (provider: ProviderRecord) =>
  provider.enabled === false
    ? { label: "disabled", color: "gray" }
    : provider.active
    ? { label: "active", color: "teal" }
    : { label: "inactive", color: "gray" }

/** What of the providers this viewer is shown. */
interface View {
  /** Where each provider comes from, its upstream key and its status page beside its name. */
  readonly detailed: boolean
  /** Each provider's health. */
  readonly showHealth: boolean
  /** What can be done to each provider. */
  readonly administrator: boolean
}

const columns = ({ detailed, showHealth, administrator }: View) => [
  "Provider",
  { when: detailed, column: "Source" },
  "State",
  { when: showHealth, column: "Health" },
  "Data policy",
  { when: detailed, column: "Upstream key" },
  detailed ? "Workspace key" : "Credentials",
  { when: !detailed, column: "Status page" },
  { when: administrator, column: { actions: true } }
] as const

const Health = ({ endpoints, slug }: { readonly endpoints: ReadonlyArray<EndpointStatus.ServedEndpoint>; readonly slug: string }) => {
  const found = EndpointStatus.providerHealth(endpoints, slug)
  if (found === undefined) return <Text size="sm">-</Text>
  return (
    <>
      <StateBadge color={healthColor[found.label]}>{found.label}</StateBadge>
      {found.of > 1 && <Text size="xs" c="dimmed">{`${found.count} of ${found.of} endpoints`}</Text>}
    </>
  )
}

const Manage = ({ provider, actions }: { readonly provider: ProviderRecord; readonly actions: ProviderActions }) => (
  <RowActions>
    <RowButton label={`Test ${provider.name}`} loading={actions.testing === provider.slug} onClick={() => actions.test(provider)}>
      Test
    </RowButton>
    {provider.source === "api"
      ? (
        <Menu position="bottom-end" withinPortal>
          <Menu.Target>
            <Button size="compact-sm" variant="light" aria-label={`Manage ${provider.name}`}>Manage</Button>
          </Menu.Target>
          <Menu.Dropdown>
            <Menu.Item onClick={() => actions.edit(provider)}>Edit</Menu.Item>
            <Menu.Item onClick={() => actions.rotate(provider)}>Rotate key</Menu.Item>
            <Menu.Item onClick={() => actions.setEnabled(provider, provider.enabled === false)}>
              {provider.enabled === false ? "Enable" : "Disable"}
            </Menu.Item>
            <Menu.Divider />
            <Menu.Item color="red" onClick={() => actions.remove(provider)}>Delete</Menu.Item>
          </Menu.Dropdown>
        </Menu>
      )
      : <Text size="xs" c="dimmed">read-only</Text>}
  </RowActions>
)

const ProviderRow = ({ provider, view: { detailed, showHealth, administrator }, credentials, endpoints, actions }: {
  readonly provider: ProviderRecord
  readonly view: View
  /** Whose credentials pay for this workspace's calls: its own key's label, or none (management keys only). */
  readonly credentials: { readonly own: string | undefined } | undefined
  readonly endpoints: ReadonlyArray<EndpointStatus.ServedEndpoint>
  readonly actions: ProviderActions
}) => {
  const state = stateOf(provider)
  return (
    <Table.Tr data-provider={provider.slug} data-source={provider.source}>
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
        <StateBadge color={state.color}>{state.label}</StateBadge>
      </Table.Td>
      {showHealth && <Table.Td style={{ whiteSpace: "nowrap" }}><Health endpoints={endpoints} slug={provider.slug} /></Table.Td>}
      <Table.Td>
        <Text size="sm">{provider.zdr ? "zero data retention" : "retains data"}</Text>
        <Text size="xs" c="dimmed">{provider.data_collection === "deny" ? "no training on data" : "may collect data"}</Text>
      </Table.Td>
      {detailed && <Table.Td><Text size="sm">{ProviderDraft.credential(provider.api_key)}</Text></Table.Td>}
      <Table.Td>
        {credentials === undefined ? "-" : credentials.own !== undefined
          ? <Badge variant="light" color="indigo">your own key ({credentials.own})</Badge>
          : <Text size="sm">the gateway's</Text>}
      </Table.Td>
      {!detailed && (
        <Table.Td>
          {provider.status_page_url === null ? "-" : <Anchor href={provider.status_page_url} underline="always" size="sm">status</Anchor>}
        </Table.Td>
      )}
      {administrator && <Table.Td><Manage provider={provider} actions={actions} /></Table.Td>}
    </Table.Tr>
  )
}

export const ProviderTable = ({ providers, loading, detailed, showHealth, administrator, ownKey, endpoints, actions }: {
  readonly providers: ReadonlyArray<ProviderRecord>
  readonly loading: boolean
  readonly detailed: boolean
  readonly showHealth: boolean
  readonly administrator: boolean
  /** The label of the workspace's own key for a provider, if it brings one; `undefined` where it is not shown (a standard key, a person). */
  readonly ownKey: ((slug: string) => string | undefined) | undefined
  readonly endpoints: ReadonlyArray<EndpointStatus.ServedEndpoint>
  readonly actions: ProviderActions
}) => (
  <DataTable
    label="Providers"
    minWidth={detailed ? 940 : 640}
    columns={columns({ detailed, showHealth, administrator })}
    horizontalSpacing={detailed ? 8 : "sm"}
    striped
    aria-busy={loading}
  >
    {providers.map((provider) => (
      <ProviderRow
        key={provider.slug}
        provider={provider}
        view={{ detailed, showHealth, administrator }}
        credentials={ownKey === undefined ? undefined : { own: ownKey(provider.slug) }}
        endpoints={endpoints}
        actions={actions}
      />
    ))}
  </DataTable>
)
