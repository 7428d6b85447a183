import { Select } from "@mantine/core"
import type { WorkspaceRecord } from "@switchyard/core/schema/Workspace"
import { useState } from "react"
import type { Session } from "./Session.ts"
import { useSession } from "./SessionContext.ts"
import { useLoad } from "./useLoad.ts"

export interface WorkspaceChoice {
  /** The workspace the page shows: a key's own; for a person, the one picked. */
  readonly id: string | null
  /** The workspaces a person may pick from (empty for a key). */
  readonly workspaces: ReadonlyArray<WorkspaceRecord>
  /** The picker, for a person who may see more than one workspace; null otherwise. */
  readonly picker: React.JSX.Element | null
  readonly error: unknown
}

/**
 * The workspaces a person may see, of those the gateway lists: every one for an instance admin or
 * viewer, else those their groups give them a role in.
 */
export const visibleTo = (session: Session, listed: ReadonlyArray<WorkspaceRecord>): ReadonlyArray<WorkspaceRecord> => {
  const person = session.person
  if (person === null || person.role !== null) return listed
  return listed.filter((workspace) => person.workspaces.some((grant) => grant.id === workspace.id))
}

/** The one shown first: the person's first workspace with a role, else `default`, else the first. */
const firstOf = (session: Session, workspaces: ReadonlyArray<WorkspaceRecord>): string | null => {
  const granted = session.person?.workspaces.find((grant) => workspaces.some((workspace) => workspace.id === grant.id))
  return granted?.id ?? workspaces.find((workspace) => workspace.slug === "default")?.id ?? workspaces[0]?.id ?? null
}

/**
 * Which workspace a page shows. A key's page shows the key's workspace, as before people signed
 * in; a person picks one of the workspaces they may see.
 */
export const useWorkspaceChoice = (): WorkspaceChoice => {
  const session = useSession()
  const { client } = session
  const isPerson = session.person !== null
  const listed = useLoad(
    ["workspaces", client, isPerson],
    (signal) => (isPerson ? client.workspaces.list({ query: {} }, { signal }).then((list) => list.data) : Promise.resolve([]))
  )
  const [picked, setPicked] = useState<string | null>(null)
  if (session.key !== null) return { id: session.key.workspace_id, workspaces: [], picker: null, error: undefined }
  const workspaces = visibleTo(session, listed.data ?? [])
  const id = picked !== null && workspaces.some((workspace) => workspace.id === picked) ? picked : firstOf(session, workspaces)
  const picker = workspaces.length < 2 ? null : (
    <Select
      label="Workspace"
      data={workspaces.map((workspace) => ({ value: workspace.id, label: workspace.name }))}
      value={id}
      allowDeselect={false}
      onChange={(value) => setPicked(value)}
      w={240}
    />
  )
  return { id, workspaces, picker, error: listed.error }
}
