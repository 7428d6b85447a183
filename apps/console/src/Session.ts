import { Switchyard } from "@switchyard/client/Switchyard"
import type { CurrentKeyRecord } from "@switchyard/core/schema/ApiKey"
import * as Access from "./Access.ts"
import * as Me from "./Me.ts"

/**
 * A person signed in by single sign-on: the gateway's session cookie (`HttpOnly`: this page never
 * sees it) carries their requests, and `csrfToken` goes with every one as `x-csrf-token`.
 */
export interface Person {
  readonly user: Me.Person
  readonly role: Access.InstanceRole | null
  readonly workspaces: ReadonlyArray<Access.WorkspaceGrant>
  readonly csrfToken: string
}

/**
 * A signed-in console: a client of the gateway that served the page, what the one signed in may
 * see and do, and either the key they signed in with (kept in this browser tab's session storage
 * only) or the person the gateway's session cookie names (no key in the browser at all).
 */
export interface Session {
  readonly client: Switchyard
  readonly access: Access.Access
  /** The key signed in with; null for a person. */
  readonly key: CurrentKeyRecord | null
  /** A person signed in by single sign-on; null for a key. */
  readonly person: Person | null
  /** A management key, or a person: the workspace views rather than one key's own usage. */
  readonly isManagement: boolean
}

const storageKey = "switchyard.console.key"

export const storedSecret = (): string | null => sessionStorage.getItem(storageKey)

export const forget = (): void => sessionStorage.removeItem(storageKey)

/**
 * A client for the gateway that served this page. One retry by default: a person is waiting and
 * sees the server's message. Model calls a person sends by hand take `retries: 0`, so one click
 * is one request.
 */
export const clientFor = (secret: string, retries = 1): Switchyard =>
  new Switchyard({ baseUrl: window.location.origin, apiKey: secret, retry: { retries } })

/** A client carried by the session cookie, sending the session's CSRF token with every request. */
const personalClient = (csrfToken: string): Switchyard =>
  new Switchyard({ baseUrl: window.location.origin, headers: { "x-csrf-token": csrfToken }, retry: { retries: 1 } })

const meUrl = () => `${window.location.origin}/api/v1/me`

/** `GET /me` with `secret` as the bearer key; null when the gateway does not answer it. */
const meOfKey = async (secret: string): Promise<Me.Me | null> => {
  try {
    const response = await fetch(meUrl(), { headers: { authorization: `Bearer ${secret}` }, credentials: "omit" })
    return response.ok ? Me.decodeMe(await response.json()) : null
  } catch {
    return null
  }
}

/**
 * Checks the key with `GET /key` and keeps it for this tab only when the gateway accepts it.
 */
export const signIn = async (secret: string): Promise<Session> => {
  const client = clientFor(secret.trim())
  try {
    const { data } = await client.keys.current()
    sessionStorage.setItem(storageKey, secret.trim())
    const me = data.is_management_key ? await meOfKey(secret.trim()) : null
    const access = Access.of(
      data.is_management_key ? { _tag: "ManagementKey", administrator: me?.role === "admin" } : { _tag: "StandardKey" }
    )
    return { client, key: data, person: null, isManagement: data.is_management_key, access }
  } catch (error) {
    await client.close()
    throw error
  }
}

/** `GET /ui/auth/options`: how one may sign in here (keys only when the gateway does not say). */
const signInMethods = async (): Promise<Me.SignInMethods> => {
  const response = await fetch(`${window.location.origin}/ui/auth/options`, { credentials: "omit", headers: { accept: "application/json" } })
  return Me.decodeSignInMethods(response.ok ? await response.json().catch(() => null) : null)
}

/** What the page learned on load: a person's session, or how one may sign in. */
export type Found =
  | { readonly _tag: "Person"; readonly session: Session }
  | { readonly _tag: "SignedOut"; readonly methods: Me.SignInMethods }

/**
 * Asks the gateway, with the session cookie if the browser has one, who is signed in. A person
 * signed in by single sign-on gets a session at once; otherwise the answer says how one may sign
 * in (a gateway that does not know `GET /me` takes keys only).
 */
export const find = async (): Promise<Found> => {
  const response = await fetch(meUrl(), { credentials: "same-origin", headers: { accept: "application/json" } })
  const body: unknown = await response.json().catch(() => null)
  const me = response.ok ? Me.decodeMe(body) : null
  if (me === null || me.via !== "session" || me.user === null || me.csrf_token === undefined) {
    return { _tag: "SignedOut", methods: await signInMethods() }
  }
  const person: Person = { user: me.user, role: me.role, workspaces: me.workspaces, csrfToken: me.csrf_token }
  const access = Access.of({ _tag: "Person", userId: me.user.id, role: me.role, workspaces: me.workspaces })
  return { _tag: "Person", session: { client: personalClient(me.csrf_token), access, key: null, person, isManagement: true } }
}

/**
 * Ends a person's session: `POST /ui/auth/logout` with the CSRF token, then goes where the gateway
 * says (`redirect_to`: the identity provider's sign-out, which comes back here), else to the
 * console's sign-in page. Sent by `fetch` rather than a form: a form's redirect to the identity
 * provider would break the console's `form-action 'self'`.
 */
export const signOutPerson = async (person: Person): Promise<void> => {
  let next = "/ui/"
  try {
    const response = await fetch("/ui/auth/logout", {
      method: "POST",
      headers: { "x-csrf-token": person.csrfToken, accept: "application/json" },
      credentials: "same-origin",
      redirect: "manual"
    })
    const body: unknown = response.ok ? await response.json().catch(() => null) : null
    const to = typeof body === "object" && body !== null ? (body as { readonly redirect_to?: unknown }).redirect_to : undefined
    if (typeof to === "string" && /^(https?:\/\/|\/(?!\/))/u.test(to)) next = to
  } finally {
    window.location.assign(next)
  }
}
