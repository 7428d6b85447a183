/**
 * The config file's `sso` section: single sign-on with OpenID Connect for the console and the
 * management API, and the roles people get from their identity provider's groups.
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"

const Groups = Schema.Array(Schema.String.check(Schema.isMinLength(1)))

/**
 * The groups that give a workspace role: `admin` (every key of the workspace) or `member` (its
 * usage and the keys they created).
 *
 * @since 0.1.0
 */
const WorkspaceRoles = Schema.Struct({
  admin: Groups.pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  member: Groups.pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
})

/** What the gateway sets on every authorization request itself; `authorization_params` may not. */
const reservedParams = ["client_id", "redirect_uri", "response_type", "scope", "state", "nonce", "code_challenge", "code_challenge_method"]

/**
 * More parameters of the authorization request, for an IdP that needs them: Google's
 * `{ "access_type": "offline", "prompt": "consent" }` for a refresh token, Entra ID's `domain_hint`.
 * The ones the gateway sets itself (state, nonce, PKCE, scope, redirect URI) are refused.
 */
const AuthorizationParams = Schema.Record(Schema.String, Schema.String).check(Schema.makeFilter((params) =>
  Object.keys(params).filter((name) => reservedParams.includes(name)).map((name) => ({
    path: [name],
    issue: `${name} is set by the gateway on every sign-in; it cannot be given in authorization_params`
  }))
))

/**
 * The `sso` section. `issuer` is discovered (`/.well-known/openid-configuration`); it is an
 * `https` URL, or an `http` one on a loopback address (a test IdP on the same machine). The client
 * secret is read from the environment variable `client_secret_env` names, never from the file.
 *
 * @since 0.1.0
 */
export const Sso = Schema.Struct({
  issuer: Schema.String.check(
    Schema.isPattern(/^(https:\/\/\S+|http:\/\/(127\.0\.0\.1|localhost|\[::1\])(:\d+)?(\/\S*)?)$/u, {
      description: "an https URL (or http on a loopback address)"
    })
  ),
  client_id: Schema.String.check(Schema.isMinLength(1)),
  client_secret_env: Schema.String.check(Schema.isPattern(/^[A-Za-z_][A-Za-z0-9_]*$/u)),
  scopes: Schema.Array(Schema.String).pipe(
    Schema.withDecodingDefaultKey(Effect.succeed(["openid", "email", "profile", "offline_access"]))
  ),
  authorization_params: AuthorizationParams.pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))),
  groups_claim: Schema.String.check(Schema.isMinLength(1)).pipe(Schema.withDecodingDefaultKey(Effect.succeed("groups"))),
  allowed_domains: Schema.Array(Schema.String).pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
  roles: Schema.Struct({
    admin: Groups.pipe(Schema.withDecodingDefaultKey(Effect.succeed([]))),
    viewer: Groups.pipe(Schema.withDecodingDefaultKey(Effect.succeed([])))
  }).pipe(Schema.withDecodingDefaultKey(Effect.succeed({ admin: [], viewer: [] }))),
  workspace_roles: Schema.Record(Schema.String, WorkspaceRoles).pipe(Schema.withDecodingDefaultKey(Effect.succeed({}))),
  key_sign_in: Schema.Boolean.pipe(Schema.withDecodingDefaultKey(Effect.succeed(false)))
})

/**
 * @since 0.1.0
 */
export type Sso = typeof Sso.Type

/**
 * What a person may do, from their groups: the instance role (`admin` over `viewer`) and each
 * workspace's (`admin` over `member`); `null` and no workspace when no group is mapped.
 *
 * @since 0.1.0
 */
export interface Roles {
  readonly role: "admin" | "viewer" | null
  readonly workspaces: ReadonlyArray<{ readonly id: string; readonly role: "admin" | "member" }>
}

/**
 * The roles a person's groups give under `sso`.
 *
 * @since 0.1.0
 */
export const rolesOf = (sso: Sso, groups: ReadonlyArray<string>): Roles => {
  const has = (mapped: ReadonlyArray<string>) => mapped.some((g) => groups.includes(g))
  const role = has(sso.roles.admin) ? "admin" : has(sso.roles.viewer) ? "viewer" : null
  const workspaces: Array<{ id: string; role: "admin" | "member" }> = []
  for (const [id, mapped] of Object.entries(sso.workspace_roles)) {
    if (has(mapped.admin)) workspaces.push({ id, role: "admin" })
    else if (has(mapped.member)) workspaces.push({ id, role: "member" })
  }
  return { role, workspaces }
}

/**
 * Whether the roles let the person in at all.
 *
 * @since 0.1.0
 */
export const anyRole = (roles: Roles): boolean => roles.role !== null || roles.workspaces.length > 0

/**
 * Whether an email's domain is allowed (every domain when the list is empty).
 *
 * @since 0.1.0
 */
export const domainAllowed = (sso: Sso, email: string | undefined): boolean => {
  if (sso.allowed_domains.length === 0) return true
  const at = email?.lastIndexOf("@") ?? -1
  if (email === undefined || at < 0) return false
  const domain = email.slice(at + 1).toLowerCase()
  return sso.allowed_domains.some((d) => d.toLowerCase() === domain)
}
