import { Alert, Button, Checkbox, Code, CopyButton, Group, Modal, NumberInput, Select, Stack, Switch, Table, Text, TextInput } from "@mantine/core"
import type { ApiKeyRecord } from "@switchyard/core/schema/ApiKey"
import { useState } from "react"
import { DataTable, RowActions, RowButton, StateBadge } from "../DataTable.tsx"
import * as Format from "../Format.ts"
import { FormModal, useSubmit } from "../FormModal.tsx"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { serverMessage } from "../ServerMessage.ts"
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

const noLimits: LimitFields = { limit: "", reset: "never", includeByok: false }

const CreateKeyModal = ({ opened, workspaceId, onClose, onCreated }: {
  readonly opened: boolean
  /** The workspace a person creates the key in; a key's keys go to its own workspace. */
  readonly workspaceId: string | undefined
  readonly onClose: () => void
  readonly onCreated: (secret: string) => void
}) => {
  const { client, person } = useSession()
  const [name, setName] = useState("")
  const [fields, setFields] = useState<LimitFields>(noLimits)
  const [expires, setExpires] = useState("")
  const [kind, setKind] = useState("standard")
  const submission = useSubmit()

  const submit = () =>
    submission.run(() =>
      client.keys.create({
        payload: {
          name,
          ...(workspaceId === undefined ? {} : { workspace_id: workspaceId }),
          ...kindBody(kind),
          ...limitBody(fields),
          ...(expires === "" ? {} : { expires_at: new Date(expires).toISOString() })
        }
      }), (created) => {
      setName("")
      setExpires("")
      setKind("standard")
      setFields(noLimits)
      onCreated(created.key)
    })

  return (
    <FormModal
      title="Create a key"
      opened={opened}
      onClose={onClose}
      onSubmit={submit}
      submission={submission}
      failure="The key was not created"
      submit="Create key"
    >
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
    </FormModal>
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
  const submission = useSubmit()

  return (
    <FormModal
      title={`Limits of ${record.name}`}
      onClose={onClose}
      onSubmit={() => submission.run(() => client.keys.update({ params: { hash: record.hash }, payload: limitBody(fields) }), onSaved)}
      submission={submission}
      failure="The limits were not changed"
      submit="Save limits"
    >
      <LimitInputs fields={fields} onChange={setFields} />
    </FormModal>
  )
}

const columns = ["Key", "Status", "Limit", "Remaining", "Today", "Month", "Total", "BYOK", "Expires", { actions: true }] as const

const KeyRow = ({ record, self, manage, onLimits, onDisabled }: {
  readonly record: ApiKeyRecord
  /** Whether it is the key signed in, which cannot disable itself here. */
  readonly self: boolean
  /** Whether the one signed in may change its limits, disable or enable it. */
  readonly manage: boolean
  readonly onLimits: () => void
  readonly onDisabled: (disabled: boolean) => void
}) => (
  <Table.Tr>
    <Table.Td>
      <Text fw={500} size="sm">{record.name}</Text>
      <Text size="xs" c="dimmed" ff="monospace">{record.label}</Text>
      <Text size="xs" c="dimmed">{reachOf(record)}</Text>
    </Table.Td>
    <Table.Td>
      <StateBadge color={record.disabled ? "gray" : "teal"}>{record.disabled ? "disabled" : "active"}</StateBadge>
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
      {manage && (
        <RowActions>
          <RowButton label={`Edit limits of ${record.name}`} onClick={onLimits}>Limits</RowButton>
          {!self && (
            <RowButton
              variant="light"
              color={record.disabled ? "teal" : "red"}
              label={`${record.disabled ? "Enable" : "Disable"} ${record.name}`}
              onClick={() => onDisabled(!record.disabled)}
            >
              {record.disabled ? "Enable" : "Disable"}
            </RowButton>
          )}
        </RowActions>
      )}
    </Table.Td>
  </Table.Tr>
)

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
      <DataTable
        label="Keys"
        minWidth={820}
        columns={columns}
        caption="Usage columns are today (UTC), this month and all time."
        striped
        highlightOnHover
        horizontalSpacing={8}
        aria-busy={keys.loading}
      >
        {(keys.data?.data ?? []).map((record) => (
          <KeyRow
            key={record.hash}
            record={record}
            self={record.hash === self?.hash}
            manage={access.manageKey(record)}
            onLimits={() => setEditing(record)}
            onDisabled={(disabled) => setDisabled(record, disabled)}
          />
        ))}
      </DataTable>
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
