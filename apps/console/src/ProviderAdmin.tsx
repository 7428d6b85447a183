import { Alert, Button, Group, Modal, PasswordInput, SegmentedControl, Stack, Table, Text, Textarea } from "@mantine/core"
import type { ProviderTestResult } from "@switchyard/core/catalog/ManagedProvider"
import type { ProviderRecord } from "@switchyard/core/schema/ProviderListing"
import { useEffect, useState } from "react"
import { DataTable, StateBadge } from "./DataTable.tsx"
import * as Format from "./Format.ts"
import { FormModal, useSubmit } from "./FormModal.tsx"
import { ErrorNotice } from "./PageHeader.tsx"
import * as ProviderDraft from "./ProviderDraft.ts"
import * as ReplicaHealth from "./ReplicaHealth.ts"
import { useSession } from "./SessionContext.ts"

/**
 * The providers page's dialogs for instance administrators: add, edit, rotate the credential,
 * delete; and a test's results. Each closes on success and hands back what to say.
 */

const jsonText = (value: unknown) => JSON.stringify(value, null, 2)

// The adapter the text names, while it parses; the template it started from otherwise.
const adapterOf = (text: string): string => {
  const parsed = ProviderDraft.parse(text)
  return parsed._tag === "Ok" && typeof parsed.value.adapter === "string" ? parsed.value.adapter : "openai"
}

const ProviderJsonInput = ({ value, onChange, description }: {
  readonly value: string
  readonly onChange: (value: string) => void
  readonly description: string
}) => (
  <Textarea
    label="Provider (as in the config file)"
    description={description}
    autosize
    minRows={12}
    maxRows={24}
    spellCheck={false}
    styles={{ input: { fontFamily: "var(--mantine-font-family-monospace)", fontSize: 13 } }}
    value={value}
    onChange={(event) => onChange(event.currentTarget.value)}
  />
)

export const AddProviderModal = ({ opened, onClose, onAdded }: {
  readonly opened: boolean
  readonly onClose: () => void
  readonly onAdded: (slug: string) => void
}) => {
  const { client } = useSession()
  const [text, setText] = useState(() => jsonText(ProviderDraft.template))
  const [apiKey, setApiKey] = useState("")
  const submission = useSubmit()

  const submit = () => {
    const parsed = ProviderDraft.parse(text)
    if (parsed._tag === "Invalid") return submission.refuse(parsed.message)
    submission.run(() => client.providerAdmin.create({ payload: { ...parsed.value, ...(apiKey === "" ? {} : { api_key: apiKey }) } }), (created) => {
      setText(jsonText(ProviderDraft.template))
      setApiKey("")
      onAdded(created.data.slug)
    })
  }

  return (
    <FormModal
      title="Add a provider"
      opened={opened}
      size="lg"
      onClose={onClose}
      onSubmit={submit}
      submission={submission}
      failure="The provider was not added"
      submit="Add provider"
    >
      <SegmentedControl
        aria-label="Start from"
        data={ProviderDraft.templates.map((t) => ({ value: t.adapter, label: t.label }))}
        value={adapterOf(text)}
        onChange={(adapter) => {
          const chosen = ProviderDraft.templates.find((t) => t.adapter === adapter)
          if (chosen !== undefined) setText(jsonText(chosen.provider))
        }}
      />
      <ProviderJsonInput
        value={text}
        onChange={setText}
        description="Checked by the config file's own schema; it routes on every replica within a second."
      />
      <PasswordInput
        label="Upstream API key"
        description={ProviderDraft.credentialHint(adapterOf(text))}
        autoComplete="off"
        value={apiKey}
        onChange={(event) => setApiKey(event.currentTarget.value)}
      />
    </FormModal>
  )
}

export const EditProviderModal = ({ slug, onClose, onSaved }: {
  readonly slug: string
  readonly onClose: () => void
  readonly onSaved: (changed: number) => void
}) => {
  const { client } = useSession()
  const [stored, setStored] = useState<ProviderDraft.ProviderJson | null>(null)
  const [replicas, setReplicas] = useState<ReadonlyArray<ReplicaHealth.ReplicaRow>>([])
  const [text, setText] = useState("")
  const submission = useSubmit()
  const { refuse } = submission

  useEffect(() => {
    const controller = new AbortController()
    client.providerAdmin.get({ params: { slug } }, { signal: controller.signal }).then(
      (found) => {
        setStored(found.data.provider)
        setText(jsonText(found.data.provider))
        setReplicas(ReplicaHealth.rows(found.data.replicas))
      },
      (failure: unknown) => controller.signal.aborted || refuse(failure)
    )
    return () => controller.abort()
  }, [client, slug, refuse])

  const submit = () => {
    if (stored === null) return
    const parsed = ProviderDraft.parse(text)
    if (parsed._tag === "Invalid") return refuse(parsed.message)
    const change = ProviderDraft.patch(stored, parsed.value)
    if (change._tag === "Invalid") return refuse(change.message)
    const count = Object.keys(change.fields).length
    if (count === 0) return onSaved(0)
    submission.run(() => client.providerAdmin.update({ params: { slug }, payload: change.fields }), () => onSaved(count))
  }

  return (
    <FormModal
      title={`Edit ${slug}`}
      size="lg"
      onClose={onClose}
      onSubmit={submit}
      submission={submission}
      failure="The provider was not changed"
      submit="Save provider"
      disabled={stored === null}
    >
      {stored === null && submission.error === null ? <Text size="sm">Loading…</Text> : (
        <ProviderJsonInput
          value={text}
          onChange={setText}
          description="The fields you change are replaced (endpoints as a whole); the credential is changed with Rotate key."
        />
      )}
      {replicas.length === 0 ? null : <ReplicaTable name={slug} replicas={replicas} />}
    </FormModal>
  )
}

export const RotateKeyModal = ({ provider, onClose, onSaved }: {
  readonly provider: ProviderRecord
  readonly onClose: () => void
  readonly onSaved: (text: string) => void
}) => {
  const { client } = useSession()
  const [apiKey, setApiKey] = useState("")
  const submission = useSubmit()

  const send = (value: string | null) =>
    submission.run(() => client.providerAdmin.update({ params: { slug: provider.slug }, payload: { api_key: value } }), (updated) =>
      onSaved(
        value === null
          ? `Removed the upstream key of ${provider.name}.`
          : `Rotated the upstream key of ${provider.name}: ${ProviderDraft.credential(updated.data.api_key)}.`
      ))

  return (
    <FormModal
      title={`Upstream key of ${provider.name}`}
      onClose={onClose}
      onSubmit={() => send(apiKey)}
      submission={submission}
      failure="The key was not changed"
      submit="Save key"
      aside={provider.api_key?.set === true
        ? <Button variant="subtle" color="red" onClick={() => send(null)} disabled={submission.busy}>Remove the stored key</Button>
        : <span />}
    >
      <Text size="sm">Now: {ProviderDraft.credential(provider.api_key)}</Text>
      <PasswordInput
        label="New upstream API key"
        description="Replaces the stored one at once; it is never shown again."
        autoComplete="off"
        required
        value={apiKey}
        onChange={(event) => setApiKey(event.currentTarget.value)}
      />
    </FormModal>
  )
}

export const DeleteProviderModal = ({ provider, onClose, onDeleted }: {
  readonly provider: ProviderRecord
  readonly onClose: () => void
  readonly onDeleted: () => void
}) => {
  const { client } = useSession()
  const { error, busy, run } = useSubmit()
  const remove = () => run(() => client.providerAdmin.delete({ params: { slug: provider.slug } }), onDeleted)
  return (
    <Modal opened onClose={onClose} title={`Delete ${provider.name}?`}>
      <Stack>
        <Text size="sm">
          Its models stop being routed to it on every replica within a second, and its stored key is deleted. Requests already
          under way finish.
        </Text>
        <ErrorNotice error={error} title="The provider was not deleted" />
        <Group justify="flex-end">
          <Button variant="default" onClick={onClose}>Cancel</Button>
          <Button color="red" onClick={remove} loading={busy}>Delete provider</Button>
        </Group>
      </Stack>
    </Modal>
  )
}

/** A self-hosted server's replicas as the answering gateway process sees them. */
const ReplicaTable = ({ name, replicas }: { readonly name: string; readonly replicas: ReadonlyArray<ReplicaHealth.ReplicaRow> }) => (
  <DataTable label={`Replicas of ${name}`} minWidth={480} columns={["Replica", "Health", "In flight", "p50"]} striped>
    {replicas.map((r) => (
      <Table.Tr key={r.baseUrl} data-replica={r.baseUrl}>
        <Table.Td><Text size="sm" ff="monospace" style={{ overflowWrap: "anywhere" }}>{r.baseUrl}</Text></Table.Td>
        <Table.Td>
          <StateBadge color={r.state === "healthy" ? "teal" : "red"}>{r.state}</StateBadge>
        </Table.Td>
        <Table.Td>{r.inFlight}</Table.Td>
        <Table.Td style={{ whiteSpace: "nowrap" }}>{r.p50}</Table.Td>
      </Table.Tr>
    ))}
  </DataTable>
)

/** One small call to each endpoint of a provider: what each answered, and how fast. */
export const TestResults = ({ name, result, onClose }: {
  readonly name: string
  readonly result: ProviderTestResult["data"]
  readonly onClose: () => void
}) => {
  const failed = result.endpoints.filter((endpoint) => !endpoint.ok).length
  return (
    <section aria-labelledby="provider-test-title">
      <Alert
        color={result.ok ? "teal" : "red"}
        role={result.ok ? "status" : "alert"}
        title={<span id="provider-test-title">{`Test of ${name}`}</span>}
        withCloseButton
        onClose={onClose}
        mb="xs"
      >
        {result.ok
          ? `Every endpoint answered (${result.endpoints.length}).`
          : `${failed} of ${result.endpoints.length} endpoints failed.`}
      </Alert>
      <DataTable label={`Test of ${name}`} minWidth={560} columns={["Model", "Result", "Status", "Latency", "Error"]} striped>
        {result.endpoints.map((endpoint) => (
          <Table.Tr key={endpoint.model} data-tested={endpoint.model}>
            <Table.Td>
              <Text size="sm" ff="monospace">{endpoint.model}</Text>
              <Text size="xs" c="dimmed">{endpoint.task}</Text>
            </Table.Td>
            <Table.Td>
              <StateBadge color={endpoint.ok ? "teal" : "red"}>{endpoint.ok ? "answered" : "failed"}</StateBadge>
            </Table.Td>
            <Table.Td>{endpoint.status ?? "-"}</Table.Td>
            <Table.Td style={{ whiteSpace: "nowrap" }}>{Format.millis(endpoint.latency_ms)}</Table.Td>
            <Table.Td><Text size="xs" style={{ overflowWrap: "anywhere" }}>{endpoint.error ?? "-"}</Text></Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </section>
  )
}
