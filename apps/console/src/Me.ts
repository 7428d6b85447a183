import type * as Access from "./Access.ts"

/**
 * `GET /api/v1/me`: who is signed in and what they may do, as the gateway says.
 */
export interface Person {
  readonly id: string
  readonly sub: string
  readonly email: string | null
  readonly name: string | null
}

export interface Me {
  readonly user: Person | null
  readonly role: Access.InstanceRole | null
  readonly workspaces: ReadonlyArray<Access.WorkspaceGrant>
  readonly via: "session" | "management_key" | "api_key"
  /** Sessions only: the value of `x-csrf-token` on every state-changing request. */
  readonly csrf_token?: string
}

/** How the console may be signed in to, as the gateway says before anyone is. */
export interface SignInMethods {
  /** Single sign-on is configured: `/ui/auth/login` starts it. */
  readonly sso: boolean
  /** A pasted key signs in (always without single sign-on; with it, when the config keeps it). */
  readonly key: boolean
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const text = (value: unknown): string | null => (typeof value === "string" ? value : null)

/** Reads an answer of `GET /me`; null when it is not one. */
export const decodeMe = (body: unknown): Me | null => {
  if (!isRecord(body) || !Array.isArray(body.workspaces)) return null
  const via = body.via
  if (via !== "session" && via !== "management_key" && via !== "api_key") return null
  const role = body.role === "admin" || body.role === "viewer" ? body.role : null
  const user = isRecord(body.user) && typeof body.user.id === "string" && typeof body.user.sub === "string"
    ? { id: body.user.id, sub: body.user.sub, email: text(body.user.email), name: text(body.user.name) }
    : null
  const workspaces = body.workspaces.flatMap((grant): Array<Access.WorkspaceGrant> =>
    isRecord(grant) && typeof grant.id === "string" && (grant.role === "admin" || grant.role === "member")
      ? [{ id: grant.id, role: grant.role }]
      : []
  )
  const csrf = text(body.csrf_token)
  return { user, role, workspaces, via, ...(csrf === null ? {} : { csrf_token: csrf }) }
}

/**
 * Reads what the gateway says of its sign-in methods (`GET /ui/auth/options`, or the `sign_in` of
 * `GET /me`); without a word (a gateway from before single sign-on), key sign-in only.
 */
export const decodeSignInMethods = (body: unknown): SignInMethods => {
  const methods = isRecord(body) ? (isRecord(body.sign_in) ? body.sign_in : body) : {}
  return { sso: methods.sso === true, key: methods.key !== false }
}

/** Who a person is, in a few words: their name, else their email, else their subject. */
export const displayName = (person: Person): string => person.name ?? person.email ?? person.sub
