import {
  Alert,
  Badge,
  Button,
  Checkbox,
  Code,
  CopyButton,
  Group,
  Modal,
  NumberInput,
  Select,
  Stack,
  Switch,
  Table,
  Text,
  TextInput,
  VisuallyHidden
} from "@mantine/core"
import type { ApiKeyRecord } from "@switchyard/core/schema/ApiKey"
import { useState } from "react"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { serverMessage } from "../ServerMessage.ts"
import { ScrollTable } from "../ScrollTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"
import { useWorkspaceChoice } from "../WorkspaceChoice.tsx"

type LimitReset = "daily" | "weekly" | "monthly"

const resets = [
  { value: "never", label: "Never (all-time limit)" },
  { value: "daily", label: "Daily (UTC)" },
  { value: "weekly", label: "Weekly (Monday, UTC)" },
  { value: "monthly", label: "Monthly (UTC)" }
]

interface LimitFields {
  readonly limit: number | string
  readonly reset: string
  readonly includeByok: boolean
}

const limitBody = (fields: LimitFields) => ({
  limit: fields.limit === "" ? null : Number(fields.limit),
  limit_reset: fields.reset === "never" ? null : (fields.reset as LimitReset),
  include_byok_in_limit: fields.includeByok
})

const LimitInputs = ({ fields, onChange }: { readonly fields: LimitFields; readonly onChange: (fields: LimitFields) => void }) => (
  <>
    <NumberInput
      label="Spending limit (USD)"
      description="Empty: no limit"
      min={0}
      decimalScale={9}
      value={fields.limit}
      onChange={(limit) => onChange({ ...fields, limit })}
    />
    <Select
      label="Limit resets"
      data={resets}
      value={fields.reset}
      allowDeselect={false}
      onChange={(reset) => onChange({ ...fields, reset: reset ?? "never" })}
    />
    <Checkbox
      label="Count bring-your-own-key usage toward the limit"
      checked={fields.includeByok}
      onChange={(event) => onChange({ ...fields, includeByok: event.currentTarget.checked })}
    />
  </>
)

/** What the new key is and reaches: a standard key, or a management key of either scope. */
const kinds = [
  { value: "standard", label: "Standard key: calls models in this workspace" },
  { value: "management-workspace", label: "Management key: manages this workspace only" },
  { value: "management-user", label: "Management key: manages every workspace of your user" }
]

const kindBody = (kind: string) =>
  kind === "standard" ? {} : { kind: "management" as const, scope: kind === "management-user" ? "user" as const : "workspace" as const }

/** What a key reaches, in words. */
const reachOf = (record: ApiKeyRecord) =>
  record.kind === "standard"
    ? "standard · its workspace"
    : record.scope === "workspace"
    ? "management · its workspace only"
    : "management · every workspace of its user"

const CreateKeyModal = ({ opened, workspaceId, onClose, onCreated }: {
  readonly opened: boolean
  /** The workspace a person creates the key in; a key's keys go to its own workspace. */
  readonly workspaceId: string | undefined
  readonly onClose: () => void
  readonly onCreated: (secret: string) => void
}) => {
  const { client, person } = useSession()
  const [name, setName] = useState("")
  const [fields, setFields] = useState<LimitFields>({ limit: "", reset: "never", includeByok: false })
  const [expires, setExpires] = useState("")
  const [kind, setKind] = useState("standard")
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const submit = (event: React.FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    client.keys.create({
      payload: {
        name,
        ...(workspaceId === undefined ? {} : { workspace_id: workspaceId }),
        ...kindBody(kind),
        ...limitBody(fields),
        ...(expires === "" ? {} : { expires_at: new Date(expires).toISOString() })
      }
    }).then(
      (created) => {
        setName("")
        setExpires("")
        setKind("standard")
        setFields({ limit: "", reset: "never", includeByok: false })
        onCreated(created.key)
      },
      setError
    ).finally(() => setBusy(false))
  }

  return (
    <Modal opened={opened} onClose={onClose} title="Create a key">
      <form onSubmit={submit}>
        <Stack>
          <TextInput label="Name" required value={name} onChange={(event) => setName(event.currentTarget.value)} />
          {person === null && (
            <Select label="Kind" data={kinds} value={kind} allowDeselect={false} onChange={(value) => setKind(value ?? "standard")} />
          )}
          {kind === "management-user" && (
            <Alert color="yellow" title="This key reaches more than this workspace">
              A management key of user scope manages every workspace your user is a member of, now and later. To give a
              team a key for its own workspace, choose “manages this workspace only”.
            </Alert>
          )}
          <LimitInputs fields={fields} onChange={setFields} />
          <TextInput
            label="Expires at (UTC)"
            description="Empty: never expires"
            type="datetime-local"
            value={expires}
            onChange={(event) => setExpires(event.currentTarget.value)}
          />
          <ErrorNotice error={error} title="The key was not created" />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>Cancel</Button>
            <Button type="submit" loading={busy}>Create key</Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

const SecretModal = ({ secret, onClose }: { readonly secret: string | null; readonly onClose: () => void }) => (
  <Modal opened={secret !== null} onClose={onClose} title="Your new key" closeOnClickOutside={false}>
    <Stack>
      <Alert color="yellow" title="Shown only this once">
        Copy the key now: the gateway keeps only its hash and cannot show it again.
      </Alert>
      <Code block tabIndex={0} aria-label="New key secret" style={{ wordBreak: "break-all", whiteSpace: "pre-wrap" }}>{secret}</Code>
      <Group justify="flex-end">
        <CopyButton value={secret ?? ""}>
          {({ copied, copy }) => (
            <Button color={copied ? "teal" : "indigo"} onClick={copy}>{copied ? "Copied" : "Copy key"}</Button>
          )}
        </CopyButton>
        <Button variant="default" onClick={onClose}>Done</Button>
      </Group>
    </Stack>
  </Modal>
)

const EditLimitsModal = ({ record, onClose, onSaved }: {
  readonly record: ApiKeyRecord
  readonly onClose: () => void
  readonly onSaved: () => void
}) => {
  const { client } = useSession()
  const [fields, setFields] = useState<LimitFields>({
    limit: record.limit ?? "",
    reset: record.limit_reset ?? "never",
    includeByok: record.include_byok_in_limit
  })
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const submit = (event: React.FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    client.keys.update({ params: { hash: record.hash }, payload: limitBody(fields) })
      .then(onSaved, setError)
      .finally(() => setBusy(false))
  }

  return (
    <Modal opened onClose={onClose} title={`Limits of ${record.name}`}>
      <form onSubmit={submit}>
        <Stack>
          <LimitInputs fields={fields} onChange={setFields} />
          <ErrorNotice error={error} title="The limits were not changed" />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>Cancel</Button>
            <Button type="submit" loading={busy}>Save limits</Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

export const KeysPage = () => {
  const { client, key: self, person, access } = useSession()
  const choice = useWorkspaceChoice()
  // A key's keys are those of its own workspace, as the gateway defaults; a person's, of the workspace picked.
  const workspaceId = person === null ? undefined : choice.id ?? undefined
  const [includeDisabled, setIncludeDisabled] = useState(true)
  const keys = useLoad(
    ["keys", client, includeDisabled, workspaceId],
    (signal) =>
      person !== null && workspaceId === undefined
        ? Promise.resolve({ data: [] })
        : client.keys.list({ query: { include_disabled: includeDisabled, ...(workspaceId === undefined ? {} : { workspace_id: workspaceId }) } }, { signal })
  )
  const mayCreate = choice.id !== null && access.createKeys(choice.id)
  const [creating, setCreating] = useState(false)
  const [secret, setSecret] = useState<string | null>(null)
  const [editing, setEditing] = useState<ApiKeyRecord | null>(null)
  const [actionError, setActionError] = useState<string | null>(null)

  const setDisabled = (record: ApiKeyRecord, disabled: boolean) => {
    setActionError(null)
    client.keys.update({ params: { hash: record.hash }, payload: { disabled } })
      .then(keys.reload, (error: unknown) => setActionError(serverMessage(error)))
  }

  const rows = (keys.data?.data ?? []).map((record) => (
    <Table.Tr key={record.hash}>
      <Table.Td>
        <Text fw={500} size="sm">{record.name}</Text>
        <Text size="xs" c="dimmed" ff="monospace">{record.label}</Text>
        <Text size="xs" c="dimmed">{reachOf(record)}</Text>
      </Table.Td>
      <Table.Td>
        <Badge color={record.disabled ? "gray" : "teal"} variant="light" styles={{ label: { overflow: "visible" } }}>
          {record.disabled ? "disabled" : "active"}
        </Badge>
      </Table.Td>
      <Table.Td>
        <Text size="sm">{record.limit === null ? "none" : Format.money(record.limit)}</Text>
        {record.limit !== null && <Text size="xs" c="dimmed">resets {record.limit_reset ?? "never"}</Text>}
      </Table.Td>
      <Table.Td>{Format.money(record.limit_remaining)}</Table.Td>
      <Table.Td>{Format.money(record.usage_daily)}</Table.Td>
      <Table.Td>{Format.money(record.usage_monthly)}</Table.Td>
      <Table.Td>{Format.money(record.usage)}</Table.Td>
      <Table.Td>{Format.money(record.byok_usage)}</Table.Td>
      <Table.Td>{Format.dateTime(record.expires_at)}</Table.Td>
      <Table.Td>
        {access.manageKey(record) && (
        <Group gap={6} wrap="nowrap">
          <Button size="compact-sm" variant="default" onClick={() => setEditing(record)} aria-label={`Edit limits of ${record.name}`}>
            Limits
          </Button>
          {record.hash !== self?.hash && (
            <Button
              size="compact-sm"
              variant="light"
              color={record.disabled ? "teal" : "red"}
              onClick={() => setDisabled(record, !record.disabled)}
              aria-label={`${record.disabled ? "Enable" : "Disable"} ${record.name}`}
            >
              {record.disabled ? "Enable" : "Disable"}
            </Button>
          )}
        </Group>
        )}
      </Table.Td>
    </Table.Tr>
  ))

  return (
    <>
      <PageHeader
        title="Keys"
        description={person === null
          ? "Your keys in your default workspace: usage in USD, limits and when they reset."
          : "The workspace's keys: usage in USD, limits and when they reset."}
      >
        <Group align="flex-end">
          {choice.picker}
          <Switch
            label="Show disabled keys"
            checked={includeDisabled}
            onChange={(event) => setIncludeDisabled(event.currentTarget.checked)}
          />
          {mayCreate && <Button onClick={() => setCreating(true)}>Create key</Button>}
        </Group>
      </PageHeader>
      <ErrorNotice error={keys.error ?? choice.error} />
      {actionError !== null && <Alert color="red" title="The key was not changed" role="alert" mb="md">{actionError}</Alert>}
      <ScrollTable label="Keys" minWidth={820}>
        <Table striped highlightOnHover verticalSpacing="xs" horizontalSpacing={8} aria-busy={keys.loading}>
          <Table.Caption>Usage columns are today (UTC), this month and all time.</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Key</Table.Th>
              <Table.Th scope="col">Status</Table.Th>
              <Table.Th scope="col">Limit</Table.Th>
              <Table.Th scope="col">Remaining</Table.Th>
              <Table.Th scope="col">Today</Table.Th>
              <Table.Th scope="col">Month</Table.Th>
              <Table.Th scope="col">Total</Table.Th>
              <Table.Th scope="col">BYOK</Table.Th>
              <Table.Th scope="col">Expires</Table.Th>
              <Table.Th scope="col"><VisuallyHidden>Actions</VisuallyHidden></Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>{rows}</Table.Tbody>
        </Table>
      </ScrollTable>
      <CreateKeyModal
        opened={creating}
        workspaceId={workspaceId}
        onClose={() => setCreating(false)}
        onCreated={(created) => {
          setCreating(false)
          setSecret(created)
          keys.reload()
        }}
      />
      <SecretModal secret={secret} onClose={() => setSecret(null)} />
      {editing !== null && (
        <EditLimitsModal
          record={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null)
            keys.reload()
          }}
        />
      )}
    </>
  )
}
