import { Alert, Badge, Button, Group, Modal, Stack, Table, Text, Textarea, TextInput, VisuallyHidden } from "@mantine/core"
import type { InternRecord } from "@switchyard/core/schema/Intern"
import { useEffect, useState } from "react"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { serverMessage } from "../ServerMessage.ts"
import { ScrollTable } from "../ScrollTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

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
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  // Only what changed is sent; an emptied field is cleared (null), as the API defines.
  const submit = (event: React.FormEvent) => {
    event.preventDefault()
    const orNull = (text: string) => (text.trim() === "" ? null : text)
    const payload = {
      ...(name !== intern.name ? { name } : {}),
      ...(orNull(description) !== intern.description ? { description: orNull(description) } : {}),
      ...(orNull(instructions) !== intern.instructions ? { instructions: orNull(instructions) } : {}),
      ...(orNull(model) !== intern.model ? { model: orNull(model) } : {})
    }
    setBusy(true)
    setError(null)
    client.interns.update({ params: { internId: intern.id }, payload }).then(onSaved, setError).finally(() => setBusy(false))
  }

  return (
    <Modal opened onClose={onClose} title={`Update ${intern.name}`} size="lg">
      <form onSubmit={submit}>
        <Stack>
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
          <ErrorNotice error={error} title="The intern was not updated" />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>Cancel</Button>
            <Button type="submit" loading={busy}>Save</Button>
          </Group>
        </Stack>
      </form>
    </Modal>
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
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState(false)

  const submit = (event: React.FormEvent) => {
    event.preventDefault()
    setBusy(true)
    setError(null)
    client.interns.create({ payload: { name, ...(description.trim() === "" ? {} : { description }) } }).then(
      () => {
        setName("")
        setDescription("")
        onCreated()
      },
      setError
    ).finally(() => setBusy(false))
  }

  return (
    <Modal opened={opened} onClose={onClose} title="Create an intern">
      <form onSubmit={submit}>
        <Stack>
          <TextInput label="Name" required value={name} onChange={(event) => setName(event.currentTarget.value)} />
          <Textarea label="Description" autosize minRows={2} value={description} onChange={(event) => setDescription(event.currentTarget.value)} />
          <ErrorNotice error={error} title="The intern was not created" />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>Cancel</Button>
            <Button type="submit" loading={busy}>Create intern</Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}

export const InternsPage = () => {
  const { client } = useSession()
  const interns = useLoad(["interns", client], (signal) => client.interns.list({ query: { limit: 100 } }, { signal }))
  const [editing, setEditing] = useState<InternRecord | null>(null)
  const [creating, setCreating] = useState(false)
  const [notice, setNotice] = useState<{ readonly ok: boolean; readonly text: string } | null>(null)
  const list = interns.data?.data ?? []
  const anyMoving = list.some((intern) => moving.has(intern.status))

  useEffect(() => {
    if (!anyMoving) return
    const timer = setInterval(interns.reload, 2000)
    return () => clearInterval(timer)
  }, [anyMoving, interns.reload])

  const act = (intern: InternRecord, action: "suspend" | "provision") => {
    setNotice(null)
    const call = action === "suspend"
      ? client.interns.suspend({ params: { internId: intern.id } })
      : client.interns.provision({ params: { internId: intern.id } })
    call.then(
      () => {
        setNotice({
          ok: true,
          text: action === "suspend"
            ? `Suspended ${intern.name}: its runtime is stopped; its disk and settings are kept.`
            : `Provisioning ${intern.name}.`
        })
        interns.reload()
      },
      (error: unknown) => setNotice({ ok: false, text: `${intern.name}: ${serverMessage(error)}` })
    )
  }

  return (
    <>
      <PageHeader title="Interns" description="The interns of this key's workspace, their status and settings.">
        <Button onClick={() => setCreating(true)}>Create intern</Button>
      </PageHeader>
      <ErrorNotice error={interns.error} />
      {notice !== null && (
        <Alert color={notice.ok ? "teal" : "red"} role={notice.ok ? "status" : "alert"} mb="md" withCloseButton onClose={() => setNotice(null)}>
          {notice.text}
        </Alert>
      )}
      <ScrollTable label="Interns" minWidth={760}>
        <Table striped verticalSpacing="xs" aria-busy={interns.loading}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Intern</Table.Th>
              <Table.Th scope="col">Status</Table.Th>
              <Table.Th scope="col">Model</Table.Th>
              <Table.Th scope="col">Hostname</Table.Th>
              <Table.Th scope="col">Updated</Table.Th>
              <Table.Th scope="col"><VisuallyHidden>Actions</VisuallyHidden></Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((intern) => (
              <Table.Tr key={intern.id} data-intern={intern.name}>
                <Table.Td miw={140}>
                  <Text fw={500} size="sm">{intern.name}</Text>
                  {intern.description !== null && <Text size="xs" c="dimmed" lineClamp={2}>{intern.description}</Text>}
                </Table.Td>
                <Table.Td miw={130}>
                  <Badge color={statusColor[intern.status]} variant="light">{intern.status.replaceAll("_", " ")}</Badge>
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
                  <Group gap={6} wrap="nowrap">
                    <Button size="compact-sm" variant="default" onClick={() => setEditing(intern)} aria-label={`Update ${intern.name}`}>
                      Update
                    </Button>
                    {intern.status === "stopped" || intern.status === "failed"
                      ? (
                        <Button size="compact-sm" variant="light" onClick={() => act(intern, "provision")} aria-label={`Provision ${intern.name}`}>
                          Provision
                        </Button>
                      )
                      : (
                        <Button
                          size="compact-sm"
                          variant="light"
                          color="red"
                          onClick={() => act(intern, "suspend")}
                          aria-label={`Suspend ${intern.name}`}
                        >
                          Suspend
                        </Button>
                      )}
                  </Group>
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollTable>
      {!interns.loading && list.length === 0 && interns.error === undefined && (
        <Text c="dimmed" mt="md">No interns in this workspace yet.</Text>
      )}
      <CreateInternModal
        opened={creating}
        onClose={() => setCreating(false)}
        onCreated={() => {
          setCreating(false)
          interns.reload()
        }}
      />
      {editing !== null && (
        <EditInternModal
          intern={editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null)
            interns.reload()
          }}
        />
      )}
    </>
  )
}
