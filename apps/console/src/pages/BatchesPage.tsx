import { Badge, Button, Code, Group, Progress, Stack, Table, Text } from "@mantine/core"
import type { BatchObject, ProviderJobStatus } from "@switchyard/core/schema/Batch"
import * as BatchProgress from "../BatchProgress.ts"
import { CursorButtons, useCursorPages } from "../CursorPages.tsx"
import { DataTable, RowActions, RowButton, StateBadge } from "../DataTable.tsx"
import * as Format from "../Format.ts"
import { NoticeAlert, useNotice } from "../Notice.tsx"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import * as ProviderJobs from "../ProviderJobs.ts"
import { storedSecret } from "../Session.ts"
import { useSession } from "../SessionContext.ts"
import { useLoad, useReloadWhile } from "../useLoad.ts"

const statusColor: Record<BatchObject["status"], string> = {
  validating: "blue",
  in_progress: "indigo",
  finalizing: "indigo",
  completed: "teal",
  failed: "red",
  expired: "orange",
  cancelling: "orange",
  cancelled: "gray"
}

const jobColor: Record<ProviderJobStatus, string> = {
  submitting: "blue",
  in_progress: "indigo",
  cancelling: "orange",
  completed: "teal",
  live: "grape",
  failed: "red",
  expired: "orange",
  cancelled: "gray"
}

const pageSize = 20

const at = (seconds: number | null) => (seconds === null ? "-" : Format.dateTime(new Date(seconds * 1000).toISOString()))

/**
 * Saves a file of the batch (its output or error lines) as the browser's download, read with
 * the signed-in key from `GET /files/{id}/content`.
 */
const download = async (fileId: string, name: string) => {
  const response = await fetch(`${window.location.origin}/api/v1/files/${encodeURIComponent(fileId)}/content`, {
    headers: { authorization: `Bearer ${storedSecret() ?? ""}` }
  })
  if (!response.ok) {
    const body = await response.json().catch(() => null) as { readonly error?: { readonly message?: string } } | null
    throw new Error(body?.error?.message ?? `The gateway answered HTTP ${response.status}`)
  }
  const url = URL.createObjectURL(await response.blob())
  const anchor = document.createElement("a")
  anchor.href = url
  anchor.download = name
  document.body.append(anchor)
  anchor.click()
  anchor.remove()
  setTimeout(() => URL.revokeObjectURL(url), 10_000)
}

/** The jobs a batch's lines went to at providers' own batch APIs, by provider. */
const ProviderJobList = ({ jobs: all }: { readonly jobs: BatchObject["provider_jobs"] }) => (
  <>
    {ProviderJobs.byProvider(all).map((jobs) => (
      <Stack key={jobs.provider} gap={2} mt={4} data-provider-jobs={jobs.provider} title={jobs.ids.join("\n")}>
        <Text size="xs">
          <Code>{jobs.provider}</Code> batch API: {Format.integer(jobs.jobs)} {jobs.jobs === 1 ? "job" : "jobs"}, {Format.integer(jobs.lines)} lines
        </Text>
        <Group gap={4}>
          {jobs.statuses.map(([status, count]) => (
            <Badge key={status} size="xs" variant="light" color={jobColor[status]} styles={{ label: { overflow: "visible" } }}>
              {count} {status.replace("_", " ")}
            </Badge>
          ))}
        </Group>
      </Stack>
    ))}
  </>
)

const columns = (management: boolean) => [
  "Batch",
  { when: management, column: "Workspace" },
  "Status",
  { title: "Progress", miw: 150 },
  "Served",
  "Failed",
  "Cost so far",
  "Created (UTC)",
  { actions: true }
] as const

const BatchRow = ({ batch, management, mayCancel, onCancel, onSave }: {
  readonly batch: BatchObject
  /** The signed-in role may cancel batches (console Access rule). */
  readonly mayCancel: boolean
  /** Signed in with a management key: the batch's workspace shown, its files not (they are its standard keys' to read). */
  readonly management: boolean
  readonly onCancel: () => void
  readonly onSave: (fileId: string, name: string) => void
}) => {
  const { completed, failed, total } = batch.request_counts
  const done = BatchProgress.done(batch.request_counts)
  return (
    <Table.Tr data-batch={batch.id} data-status={batch.status}>
      <Table.Td>
        <Code style={{ overflowWrap: "anywhere" }}>{batch.id}</Code>
        <Text size="xs" c="dimmed">{batch.endpoint}</Text>
      </Table.Td>
      {management && (
        <Table.Td>
          <Code style={{ overflowWrap: "anywhere" }}>{batch.workspace_id ?? "-"}</Code>
        </Table.Td>
      )}
      <Table.Td style={{ whiteSpace: "nowrap" }}>
        <StateBadge color={statusColor[batch.status]}>{batch.status.replace("_", " ")}</StateBadge>
      </Table.Td>
      <Table.Td>
        <Progress value={done * 100} color={failed > 0 ? "orange" : "indigo"} aria-label={`Progress of ${batch.id}`} />
        <Text size="xs" c="dimmed" mt={2}>{total === 0 ? "-" : `${Format.integer(completed + failed)} of ${Format.integer(total)} lines`}</Text>
        <ProviderJobList jobs={batch.provider_jobs} />
      </Table.Td>
      <Table.Td>{Format.integer(completed)}</Table.Td>
      <Table.Td>{Format.integer(failed)}</Table.Td>
      <Table.Td>{Format.money(batch.cost)}</Table.Td>
      <Table.Td style={{ whiteSpace: "nowrap" }}>{at(batch.created_at)}</Table.Td>
      <Table.Td>
        <RowActions>
          {mayCancel && BatchProgress.cancellable(batch.status) && (
            <RowButton variant="light" color="red" label={`Cancel ${batch.id}`} onClick={onCancel}>Cancel</RowButton>
          )}
          {!management && batch.output_file_id !== null && (
            <RowButton label={`Download the output of ${batch.id}`} onClick={() => onSave(batch.output_file_id!, `${batch.id}-output.jsonl`)}>
              Output
            </RowButton>
          )}
          {!management && batch.error_file_id !== null && (
            <RowButton label={`Download the errors of ${batch.id}`} onClick={() => onSave(batch.error_file_id!, `${batch.id}-errors.jsonl`)}>
              Errors
            </RowButton>
          )}
        </RowActions>
      </Table.Td>
    </Table.Tr>
  )
}

export const BatchesPage = () => {
  const { client, isManagement, access } = useSession()
  const pages = useCursorPages()
  const { cursor } = pages
  const batches = useLoad(
    ["batches", client, cursor],
    (signal) => client.batches.list({ query: { limit: pageSize, ...(cursor === null ? {} : { after: cursor }) } }, { signal })
  )
  const notices = useNotice()
  const list = batches.data?.data ?? []
  useReloadWhile(list.some((batch) => BatchProgress.moving(batch.status)), batches.reload)

  const cancel = (batch: BatchObject) => {
    notices.clear()
    client.batches.cancel({ params: { batch_id: batch.id } }).then(() => {
      notices.done(`Cancelling ${batch.id}: lines under way finish, no new line starts.`)
      batches.reload()
    }, notices.failed(batch.id))
  }
  const save = (fileId: string, name: string) => {
    notices.clear()
    download(fileId, name).catch(notices.failed(name))
  }

  return (
    <>
      <PageHeader
        title="Batches"
        description={isManagement
          ? "The batches this management key oversees (its workspace's; an instance administrator's: every workspace's): how far each got, what its lines cost so far; cancel a runaway one."
          : "This workspace's batches (OpenAI's Batch API): how far each got, what its lines cost so far, the jobs its lines went to at providers' own batch APIs, and its output."}
      >
        <Button variant="default" onClick={batches.reload} loading={batches.loading}>Refresh</Button>
      </PageHeader>
      <ErrorNotice error={batches.error} />
      <NoticeAlert notice={notices.notice} onClose={notices.clear} mb="md" />
      <DataTable label="Batches" minWidth={900} columns={columns(isManagement)} striped horizontalSpacing={8} aria-busy={batches.loading}>
        {list.map((batch) => (
          <BatchRow key={batch.id} batch={batch} management={isManagement} mayCancel={access.cancelBatches} onCancel={() => cancel(batch)} onSave={save} />
        ))}
      </DataTable>
      <Stack gap="xs" mt="sm">
        {batches.data !== undefined && list.length === 0 && (
          <Text c="dimmed" size="sm">No batch yet: upload a JSONL file with purpose "batch" and create one (see docs/batches.md).</Text>
        )}
        <CursorButtons pages={pages} next={batches.data?.has_more === true ? batches.data.last_id ?? null : null} />
      </Stack>
    </>
  )
}
