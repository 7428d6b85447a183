import { Button, Table, Text, Textarea, TextInput } from "@mantine/core"
import type { InternRecord } from "@switchyard/core/schema/Intern"
import { useState } from "react"
import { DataTable, RowActions, RowButton, StateBadge } from "../DataTable.tsx"
import * as Format from "../Format.ts"
import { FormModal, useSubmit } from "../FormModal.tsx"
import { NoticeAlert, useNotice } from "../Notice.tsx"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad, useReloadWhile } from "../useLoad.ts"

const statusColor: Record<InternRecord["status"], string> = {
  running: "teal",
  queued: "blue",
  provisioning: "blue",
  stopped: "gray",
  failed: "red",
  destroying: "orange",
  destroy_failed: "red",
  awaiting_slack_install: "yellow"
}

// While an intern is moving between states the page asks again every two seconds.
const moving: ReadonlySet<InternRecord["status"]> = new Set(["queued", "provisioning", "destroying"])

const EditInternModal = ({ intern, onClose, onSaved }: {
  readonly intern: InternRecord
  readonly onClose: () => void
  readonly onSaved: () => void
}) => {
  const { client } = useSession()
  const [name, setName] = useState(intern.name)
  const [description, setDescription] = useState(intern.description ?? "")
  const [instructions, setInstructions] = useState(intern.instructions ?? "")
  const [model, setModel] = useState(intern.model ?? "")
  const submission = useSubmit()

  // Only what changed is sent; an emptied field is cleared (null), as the API defines.
  const submit = () => {
    const orNull = (text: string) => (text.trim() === "" ? null : text)
    const payload = {
      ...(name !== intern.name ? { name } : {}),
      ...(orNull(description) !== intern.description ? { description: orNull(description) } : {}),
      ...(orNull(instructions) !== intern.instructions ? { instructions: orNull(instructions) } : {}),
      ...(orNull(model) !== intern.model ? { model: orNull(model) } : {})
    }
    submission.run(() => client.interns.update({ params: { internId: intern.id }, payload }), onSaved)
  }

  return (
    <FormModal
      title={`Update ${intern.name}`}
      size="lg"
      onClose={onClose}
      onSubmit={submit}
      submission={submission}
      failure="The intern was not updated"
      submit="Save"
    >
      <TextInput
        label="Name"
        description="2 to 17 lowercase letters and digits, in hyphen-separated groups"
        required
        value={name}
        onChange={(event) => setName(event.currentTarget.value)}
      />
      <TextInput
        label="Model"
        description="A model slug such as openai/gpt-4o; empty means the workspace default"
        value={model}
        onChange={(event) => setModel(event.currentTarget.value)}
      />
      <Textarea label="Description" autosize minRows={2} value={description} onChange={(event) => setDescription(event.currentTarget.value)} />
      <Textarea
        label="Instructions"
        autosize
        minRows={3}
        maxRows={12}
        value={instructions}
        onChange={(event) => setInstructions(event.currentTarget.value)}
      />
      <Text size="xs" c="dimmed">Changes to a running intern reach it at its next provisioning.</Text>
    </FormModal>
  )
}

const CreateInternModal = ({ opened, onClose, onCreated }: {
  readonly opened: boolean
  readonly onClose: () => void
  readonly onCreated: () => void
}) => {
  const { client } = useSession()
  const [name, setName] = useState("")
  const [description, setDescription] = useState("")
  const submission = useSubmit()

  const submit = () =>
    submission.run(() => client.interns.create({ payload: { name, ...(description.trim() === "" ? {} : { description }) } }), () => {
      setName("")
      setDescription("")
      onCreated()
    })

  return (
    <FormModal
      title="Create an intern"
      opened={opened}
      onClose={onClose}
      onSubmit={submit}
      submission={submission}
      failure="The intern was not created"
      submit="Create intern"
    >
      <TextInput label="Name" required value={name} onChange={(event) => setName(event.currentTarget.value)} />
      <Textarea label="Description" autosize minRows={2} value={description} onChange={(event) => setDescription(event.currentTarget.value)} />
    </FormModal>
  )
}

const columns = ["Intern", "Status", "Model", "Hostname", "Updated", { actions: true }] as const

const InternRow = ({ intern, onEdit, onAct }: {
  readonly intern: InternRecord
  readonly onEdit: () => void
  readonly onAct: (action: "suspend" | "provision") => void
}) => (
  <Table.Tr data-intern={intern.name}>
    <Table.Td miw={140}>
      <Text fw={500} size="sm">{intern.name}</Text>
      {intern.description !== null && <Text size="xs" c="dimmed" lineClamp={2}>{intern.description}</Text>}
    </Table.Td>
    <Table.Td miw={130}>
      <StateBadge color={statusColor[intern.status]}>{intern.status.replaceAll("_", " ")}</StateBadge>
      {intern.progress !== null && (
        <Text size="xs" c="dimmed">
          step {intern.progress.step_number}/{intern.progress.total_steps}: {intern.progress.step_label}
        </Text>
      )}
      {intern.lastFailureMessage !== null && <Text size="xs" c="red.8">{intern.lastFailureMessage}</Text>}
    </Table.Td>
    <Table.Td><Text size="sm" ff="monospace">{intern.model ?? "workspace default"}</Text></Table.Td>
    <Table.Td><Text size="sm" ff="monospace">{intern.hostname ?? "-"}</Text></Table.Td>
    <Table.Td>{Format.dateTime(intern.updatedAt)}</Table.Td>
    <Table.Td>
      <RowActions>
        <RowButton label={`Update ${intern.name}`} onClick={onEdit}>Update</RowButton>
        {intern.status === "stopped" || intern.status === "failed"
          ? <RowButton variant="light" label={`Provision ${intern.name}`} onClick={() => onAct("provision")}>Provision</RowButton>
          : <RowButton variant="light" color="red" label={`Suspend ${intern.name}`} onClick={() => onAct("suspend")}>Suspend</RowButton>}
      </RowActions>
    </Table.Td>
  </Table.Tr>
)

export const InternsPage = () => {
  const { client } = useSession()
  const interns = useLoad(["interns", client], (signal) => client.interns.list({ query: { limit: 100 } }, { signal }))
  const [editing, setEditing] = useState<InternRecord | null>(null)
  const [creating, setCreating] = useState(false)
  const notices = useNotice()
  const list = interns.data?.data ?? []
  useReloadWhile(list.some((intern) => moving.has(intern.status)), interns.reload)

  const act = (intern: InternRecord, action: "suspend" | "provision") => {
    notices.clear()
    const call = action === "suspend"
      ? client.interns.suspend({ params: { internId: intern.id } })
      : client.interns.provision({ params: { internId: intern.id } })
    call.then(() => {
      notices.done(
        action === "suspend"
          ? `Suspended ${intern.name}: its runtime is stopped; its disk and settings are kept.`
          : `Provisioning ${intern.name}.`
      )
      interns.reload()
    }, notices.failed(intern.name))
  }
  const closed = (close: () => void) => () => {
    close()
    interns.reload()
  }

  return (
    <>
      <PageHeader title="Interns" description="The interns of this key's workspace, their status and settings.">
        <Button onClick={() => setCreating(true)}>Create intern</Button>
      </PageHeader>
      <ErrorNotice error={interns.error} />
      <NoticeAlert notice={notices.notice} onClose={notices.clear} mb="md" />
      <DataTable label="Interns" minWidth={760} columns={columns} striped aria-busy={interns.loading}>
        {list.map((intern) => (
          <InternRow key={intern.id} intern={intern} onEdit={() => setEditing(intern)} onAct={(action) => act(intern, action)} />
        ))}
      </DataTable>
      {!interns.loading && list.length === 0 && interns.error === undefined && (
        <Text c="dimmed" mt="md">No interns in this workspace yet.</Text>
      )}
      <CreateInternModal opened={creating} onClose={() => setCreating(false)} onCreated={closed(() => setCreating(false))} />
      {editing !== null && <EditInternModal intern={editing} onClose={() => setEditing(null)} onSaved={closed(() => setEditing(null))} />}
    </>
  )
}
