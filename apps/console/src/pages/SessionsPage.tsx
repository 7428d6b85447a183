import { Badge, Button, Group, Table, Text, VisuallyHidden } from "@mantine/core"
import { useState } from "react"
import * as Format from "../Format.ts"
import * as Me from "../Me.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import * as PeopleSessions from "../PeopleSessions.ts"
import { ScrollTable } from "../ScrollTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

/**
 * The sessions of people signed in by single sign-on: who, since when, last seen, until when; an
 * instance administrator ends one, or all of a person's (on every replica at once).
 */
export const SessionsPage = () => {
  const session = useSession()
  const sessions = useLoad(["people-sessions", session.client], (signal) => PeopleSessions.list(session, signal))
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState<string | null>(null)
  const own = session.person?.user.id

  const act = (id: string, run: () => Promise<unknown>) => {
    setError(null)
    setBusy(id)
    run().then(sessions.reload, setError).finally(() => setBusy(null))
  }

  const rows = (sessions.data ?? []).map((row) => (
    <Table.Tr key={row.id} data-session={row.id}>
      <Table.Td>
        <Group gap={6}>
          <Text size="sm" fw={500}>{Me.displayName(row.user)}</Text>
          {row.user.id === own && <Badge variant="light" size="sm">you</Badge>}
        </Group>
        <Text size="xs" c="dimmed">{row.user.email ?? row.user.sub}</Text>
      </Table.Td>
      <Table.Td>{Format.dateTime(row.created_at)}</Table.Td>
      <Table.Td>{Format.dateTime(row.last_seen_at)}</Table.Td>
      <Table.Td>{Format.dateTime(row.expires_at)}</Table.Td>
      <Table.Td>
        <Group gap={6} wrap="nowrap">
          <Button
            size="compact-sm"
            variant="light"
            color="red"
            loading={busy === row.id}
            onClick={() => act(row.id, () => PeopleSessions.revoke(session, row.id))}
            aria-label={`End this session of ${Me.displayName(row.user)}`}
          >
            End
          </Button>
          <Button
            size="compact-sm"
            variant="subtle"
            color="red"
            loading={busy === row.user.id}
            onClick={() => act(row.user.id, () => PeopleSessions.revokeAllOf(session, row.user.id))}
            aria-label={`End all sessions of ${Me.displayName(row.user)}`}
          >
            End all
          </Button>
        </Group>
      </Table.Td>
    </Table.Tr>
  ))

  return (
    <>
      <PageHeader title="Sessions" description="People signed in by single sign-on. Ending a session signs its person out at their next request, on every replica.">
        <Button variant="default" onClick={sessions.reload} loading={sessions.loading}>Refresh</Button>
      </PageHeader>
      <ErrorNotice error={sessions.error ?? error} />
      {sessions.data !== undefined && sessions.data.length === 0
        ? <Text c="dimmed" size="sm">Nobody is signed in by single sign-on.</Text>
        : (
          <ScrollTable label="Sessions" minWidth={760}>
            <Table striped verticalSpacing="xs" aria-busy={sessions.loading}>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Person</Table.Th>
                  <Table.Th scope="col">Signed in</Table.Th>
                  <Table.Th scope="col">Last seen</Table.Th>
                  <Table.Th scope="col">Expires</Table.Th>
                  <Table.Th scope="col"><VisuallyHidden>Actions</VisuallyHidden></Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>{rows}</Table.Tbody>
            </Table>
          </ScrollTable>
        )}
    </>
  )
}
