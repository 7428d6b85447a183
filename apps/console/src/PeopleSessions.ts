import type { SessionList } from "@switchyard/core/schema/Session"
import type { Session } from "./Session.ts"

/**
 * The sessions of people signed in by single sign-on (`GET /api/v1/sessions`), and ending one
 * (`DELETE /api/v1/sessions/{id}`) or all of a person's (`DELETE /api/v1/sessions?user_id=`):
 * instance administrators only.
 */
export type PersonSession = (typeof SessionList.Type)["data"][number]

export const list = async (session: Session, signal: AbortSignal): Promise<ReadonlyArray<PersonSession>> =>
  (await session.client.sessions.list({ query: {} }, { signal })).data

export const revoke = (session: Session, id: string): Promise<unknown> => session.client.sessions.revoke({ params: { id } })

export const revokeAllOf = (session: Session, userId: string): Promise<unknown> =>
  session.client.sessions.revokeAll({ query: { user_id: userId } })
