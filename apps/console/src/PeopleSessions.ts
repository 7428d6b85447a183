import type * as Me from "./Me.ts"
import { type Session, storedSecret } from "./Session.ts"

/**
 * The sessions of people signed in by single sign-on (`GET /api/v1/sessions`), and ending one
 * (`DELETE /api/v1/sessions/{id}`) or all of a person's (`DELETE /api/v1/sessions?user_id=`):
 * instance administrators only.
 */
export interface PersonSession {
  readonly id: string
  readonly user: Me.Person
  readonly created_at: string
  readonly last_seen_at: string
  readonly expires_at: string
}

/** The gateway's refusal, worded as it worded it. */
class Refused extends Error {}

const credentials = (session: Session): Record<string, string> => {
  if (session.person !== null) return { "x-csrf-token": session.person.csrfToken }
  const secret = storedSecret()
  return secret === null ? {} : { authorization: `Bearer ${secret}` }
}

const call = async (session: Session, method: "GET" | "DELETE", path: string, signal?: AbortSignal): Promise<unknown> => {
  const response = await fetch(`${window.location.origin}/api/v1${path}`, {
    method,
    headers: { accept: "application/json", ...credentials(session) },
    credentials: session.person === null ? "omit" : "same-origin",
    ...(signal === undefined ? {} : { signal })
  })
  const body: unknown = await response.json().catch(() => null)
  if (!response.ok) {
    const message = (body as { readonly error?: { readonly message?: unknown } } | null)?.error?.message
    throw new Refused(typeof message === "string" ? message : `The gateway answered HTTP ${response.status}`)
  }
  return body
}

export const list = async (session: Session, signal: AbortSignal): Promise<ReadonlyArray<PersonSession>> => {
  const body = await call(session, "GET", "/sessions", signal) as { readonly data?: ReadonlyArray<PersonSession> } | null
  return body?.data ?? []
}

export const revoke = (session: Session, id: string): Promise<unknown> => call(session, "DELETE", `/sessions/${encodeURIComponent(id)}`)

export const revokeAllOf = (session: Session, userId: string): Promise<unknown> =>
  call(session, "DELETE", `/sessions?user_id=${encodeURIComponent(userId)}`)
