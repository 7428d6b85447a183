import { Alert, Badge, Button, Code, Group, Select, SimpleGrid, Stack, Table, Text, TextInput } from "@mantine/core"
import type { AuditEntry, AuditVerification } from "@switchyard/core/schema/Audit"
import { useState } from "react"
import * as AuditDiff from "../AuditDiff.ts"
import { CursorButtons, useCursorPages } from "../CursorPages.tsx"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { DataTable } from "../DataTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

interface Filters {
  readonly action: string
  readonly targetType: string
  readonly targetId: string
  readonly actor: string
  readonly since: string
  readonly until: string
  readonly limit: string
}

const noFilters: Filters = { action: "", targetType: "", targetId: "", actor: "", since: "", until: "", limit: "25" }

// Only the filters that were filled in are sent.
const queryOf = (filters: Filters, cursor: string | null) => {
  const set = (name: string, value: string) => (value.trim() === "" ? {} : { [name]: value.trim() })
  return {
    ...set("action", filters.action),
    ...set("target_type", filters.targetType),
    ...set("target_id", filters.targetId),
    ...set("actor", filters.actor),
    ...set("since", filters.since),
    ...set("until", filters.until),
    limit: Number(filters.limit),
    ...(cursor === null ? {} : { cursor: Number(cursor) })
  }
}

// A person (through a single sign-on session) by name, else email, else subject; else the key.
const actorOf = (entry: AuditEntry) => {
  const person = entry.actor.user
  if (person !== undefined) return person.name ?? person.email ?? person.sub
  return entry.actor.key_name ?? entry.actor.user_id ?? entry.actor.key_hash ?? "-"
}

// Ids, hashes and JSON values have no spaces: they break anywhere rather than widen the table.
const breakAnywhere = { overflowWrap: "anywhere" } as const

const Diff = ({ entry }: { readonly entry: AuditEntry }) => {
  const changes = AuditDiff.changes(entry.before, entry.after)
  if (changes.length === 0) return <Text size="xs" c="dimmed">No field changed</Text>
  return (
    <Stack gap={2}>
      {changes.map((change) => (
        <Text size="xs" key={change.field} data-field={change.field} style={breakAnywhere}>
          <Code>{change.field}</Code>{" "}
          {change.before === null ? <Text span c="dimmed" size="xs">unset</Text> : <Text span td="line-through" size="xs">{change.before}</Text>}
          {" → "}
          {change.after === null ? <Text span c="dimmed" size="xs">unset</Text> : <Text span fw={600} size="xs">{change.after}</Text>}
        </Text>
      ))}
    </Stack>
  )
}

const Verification = ({ result }: { readonly result: AuditVerification }) =>
  result.ok
    ? <Alert color="teal" title="The chain holds" role="status" mb="md">{`Every link of ${result.checked} entries checked.`}</Alert>
    : (
      <Alert color="red" title="The chain is broken" role="alert" mb="md">
        {`Entry ${result.first_broken?.id ?? "?"} does not link (${result.first_broken?.reason ?? "unknown"}); ${result.checked} entries checked.`}
      </Alert>
    )

export const AuditPage = () => {
  const { client } = useSession()
  const [draft, setDraft] = useState<Filters>(noFilters)
  const [filters, setFilters] = useState<Filters>(noFilters)
  const pages = useCursorPages()
  const { cursor } = pages
  const [verification, setVerification] = useState<AuditVerification | null>(null)
  const [verifyError, setVerifyError] = useState<unknown>(null)
  const [verifying, setVerifying] = useState(false)
  const entries = useLoad(["audit", client, filters, cursor], (signal) => client.audit.list({ query: queryOf(filters, cursor) }, { signal }))

  const field = (name: keyof Filters, label: string, extra: Record<string, unknown> = {}) => (
    <TextInput label={label} value={draft[name]} onChange={(event) => setDraft({ ...draft, [name]: event.currentTarget.value })} {...extra} />
  )

  const apply = (event: React.FormEvent) => {
    event.preventDefault()
    setFilters(draft)
    pages.reset()
  }

  const verify = () => {
    setVerifying(true)
    setVerifyError(null)
    setVerification(null)
    client.audit.verify().then(setVerification, setVerifyError).finally(() => setVerifying(false))
  }

  const next = entries.data?.next_cursor ?? null
  return (
    <>
      <PageHeader title="Audit" description="Management actions, newest first: who did what to which resource, and what changed.">
        <Button onClick={verify} loading={verifying} variant="light">Verify the chain</Button>
      </PageHeader>
      {verification !== null && <Verification result={verification} />}
      <ErrorNotice error={verifyError} />
      <form onSubmit={apply} aria-label="Audit filters">
        <SimpleGrid cols={{ base: 1, xs: 2, md: 4 }} mb="md">
          {field("action", "Action", { description: "Exact, or a resource such as key.*" })}
          {field("targetType", "Target type", { description: "key, workspace, budget..." })}
          {field("targetId", "Target id")}
          {field("actor", "Actor", { description: "A key hash or a user id" })}
          {field("since", "From (UTC)", { type: "date" })}
          {field("until", "Until (UTC, not included)", { type: "date" })}
          <Select
            label="Per page"
            data={["10", "25", "100"]}
            value={draft.limit}
            allowDeselect={false}
            onChange={(value) => value !== null && setDraft({ ...draft, limit: value })}
          />
          <Group align="end"><Button type="submit">Apply filters</Button></Group>
        </SimpleGrid>
      </form>
      <ErrorNotice error={entries.error} />
      {/* Fixed columns: the diff column stays narrower than a phone's screen (300 of 780 px), so
          scrolling brings a whole diff into view; wider screens widen every column in proportion. */}
      <DataTable label="Audit log" minWidth={780} columns={[{ title: "When (UTC)", w: 120 }, { title: "Action", w: 130 }, { title: "Target", w: 130 }, { title: "Actor", w: 100 }, { title: "Before → after", w: 300 }]} layout="fixed" striped horizontalSpacing={8} aria-busy={entries.loading}>
        {(entries.data?.data ?? []).map((entry) => (
          <Table.Tr key={entry.id} data-audit-id={entry.id} data-action={entry.action}>
            <Table.Td><Text size="xs" ff="monospace">{entry.at.replace("T", " ").slice(0, 19)}</Text></Table.Td>
            <Table.Td><Badge variant="light" tt="none">{entry.action}</Badge></Table.Td>
            <Table.Td><Text size="xs" style={breakAnywhere}>{entry.target.type} <Code>{entry.target.id}</Code></Text></Table.Td>
            <Table.Td><Text size="xs" style={breakAnywhere}>{actorOf(entry)}</Text></Table.Td>
            <Table.Td><Diff entry={entry} /></Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
      {entries.data !== undefined && entries.data.data.length === 0 && <Text c="dimmed" size="sm" mt="sm">No entry matches these filters.</Text>}
      <CursorButtons pages={pages} next={next} mt="md" />
    </>
  )
}
