import { Alert, Badge, Button, Code, Group, Progress, Stack, Table, Text, VisuallyHidden } from "@mantine/core"
import type { BatchObject, ProviderJobStatus } from "@switchyard/core/schema/Batch"
import { useEffect, useState } from "react"
import * as BatchProgress from "../BatchProgress.ts"
import * as Format from "../Format.ts"
import * as ProviderJobs from "../ProviderJobs.ts"
import { CursorButtons, useCursorPages } from "../CursorPages.tsx"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { serverMessage } from "../ServerMessage.ts"
import { ScrollTable } from "../ScrollTable.tsx"
import { storedSecret } from "../Session.ts"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

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

export const BatchesPage = () => {
  const { client, isManagement, access } = useSession()
  const pages = useCursorPages()
  const { cursor } = pages
  const batches = useLoad(
    ["batches", client, cursor],
    (signal) => client.batches.list({ query: { limit: pageSize, ...(cursor === null ? {} : { after: cursor }) } }, { signal })
  )
  const [notice, setNotice] = useState<{ readonly ok: boolean; readonly text: string } | null>(null)
  const list = batches.data?.data ?? []
  const anyMoving = list.some((batch) => BatchProgress.moving(batch.status))

  useEffect(() => {
    if (!anyMoving) return
    const timer = setInterval(batches.reload, 2000)
    return () => clearInterval(timer)
  }, [anyMoving, batches.reload])

  const cancel = (batch: BatchObject) => {
    setNotice(null)
    client.batches.cancel({ params: { batch_id: batch.id } }).then(
      () => {
        setNotice({ ok: true, text: `Cancelling ${batch.id}: lines under way finish, no new line starts.` })
        batches.reload()
      },
      (error: unknown) => setNotice({ ok: false, text: `${batch.id}: ${serverMessage(error)}` })
    )
  }
  const save = (fileId: string, name: string) => {
    setNotice(null)
    download(fileId, name).catch((error: unknown) => setNotice({ ok: false, text: `${name}: ${serverMessage(error)}` }))
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
      {notice !== null && (
        <Alert color={notice.ok ? "teal" : "red"} role={notice.ok ? "status" : "alert"} mb="md" withCloseButton onClose={() => setNotice(null)}>
          {notice.text}
        </Alert>
      )}
      <ScrollTable label="Batches" minWidth={900}>
        <Table striped verticalSpacing="xs" horizontalSpacing={8} aria-busy={batches.loading}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Batch</Table.Th>
              {isManagement && <Table.Th scope="col">Workspace</Table.Th>}
              <Table.Th scope="col">Status</Table.Th>
              <Table.Th scope="col" miw={150}>Progress</Table.Th>
              <Table.Th scope="col">Served</Table.Th>
              <Table.Th scope="col">Failed</Table.Th>
              <Table.Th scope="col">Cost so far</Table.Th>
              <Table.Th scope="col">Created (UTC)</Table.Th>
              <Table.Th scope="col"><VisuallyHidden>Actions</VisuallyHidden></Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {list.map((batch) => {
              const { completed, failed, total } = batch.request_counts
              const done = BatchProgress.done(batch.request_counts)
              return (
                <Table.Tr key={batch.id} data-batch={batch.id} data-status={batch.status}>
                  <Table.Td>
                    <Code style={{ overflowWrap: "anywhere" }}>{batch.id}</Code>
                    <Text size="xs" c="dimmed">{batch.endpoint}</Text>
                  </Table.Td>
                  {isManagement && (
                    <Table.Td>
                      <Code style={{ overflowWrap: "anywhere" }}>{batch.workspace_id ?? "-"}</Code>
                    </Table.Td>
                  )}
                  <Table.Td style={{ whiteSpace: "nowrap" }}>
                    <Badge variant="light" color={statusColor[batch.status]} styles={{ label: { overflow: "visible" } }}>
                      {batch.status.replace("_", " ")}
                    </Badge>
                  </Table.Td>
                  <Table.Td>
                    <Progress
                      value={done * 100}
                      color={failed > 0 ? "orange" : "indigo"}
                      aria-label={`Progress of ${batch.id}`}
                    />
                    <Text size="xs" c="dimmed" mt={2}>{total === 0 ? "-" : `${Format.integer(completed + failed)} of ${Format.integer(total)} lines`}</Text>
                    <ProviderJobList jobs={batch.provider_jobs} />
                  </Table.Td>
                  <Table.Td>{Format.integer(completed)}</Table.Td>
                  <Table.Td>{Format.integer(failed)}</Table.Td>
                  <Table.Td>{Format.money(batch.cost)}</Table.Td>
                  <Table.Td style={{ whiteSpace: "nowrap" }}>{at(batch.created_at)}</Table.Td>
                  <Table.Td>
                    <Group gap={6} wrap="nowrap">
                      {access.cancelBatches && BatchProgress.cancellable(batch.status) && (
                        <Button size="compact-sm" variant="light" color="red" onClick={() => cancel(batch)} aria-label={`Cancel ${batch.id}`}>
                          Cancel
                        </Button>
                      )}
                      {!isManagement && batch.output_file_id !== null && (
                        <Button
                          size="compact-sm"
                          variant="default"
                          onClick={() => save(batch.output_file_id!, `${batch.id}-output.jsonl`)}
                          aria-label={`Download the output of ${batch.id}`}
                        >
                          Output
                        </Button>
                      )}
                      {!isManagement && batch.error_file_id !== null && (
                        <Button
                          size="compact-sm"
                          variant="default"
                          onClick={() => save(batch.error_file_id!, `${batch.id}-errors.jsonl`)}
                          aria-label={`Download the errors of ${batch.id}`}
                        >
                          Errors
                        </Button>
                      )}
                    </Group>
                  </Table.Td>
                </Table.Tr>
              )
            })}
          </Table.Tbody>
        </Table>
      </ScrollTable>
      <Stack gap="xs" mt="sm">
        {batches.data !== undefined && list.length === 0 && (
          <Text c="dimmed" size="sm">No batch yet: upload a JSONL file with purpose "batch" and create one (see docs/batches.md).</Text>
        )}
        <CursorButtons pages={pages} next={batches.data?.has_more === true ? batches.data.last_id ?? null : null} />
      </Stack>
    </>
  )
}
