/**
 * Who may do what, for a person signed in by single sign-on: the one table of their roles' reach,
 * checked at the edge (http/AuthorizationLive.ts) before the body is read. What is left to the
 * handlers is the workspace each call acts on, which they check as they do for a management key of
 * user scope: the person's memberships (synced from their groups) are their reach, and a workspace
 * they are not a member of is a 403 for them (Management.ts).
 *
 * - Instance `admin`: every management route.
 * - Instance `viewer`: reads only, of activity, money, providers' health, the audit log, the
 *   workspaces and models; no key, no credential, no change.
 * - Workspace `admin` / `member` (no instance role): the workspaces' usage and keys (a member's own
 *   keys only: the keys handlers list and change a member's own).
 * - `GET /me` for everyone; the sessions for instance admins.
 */
import type { PersonShape } from "@switchyard/core/api/Authorization"

const reads = new Set(["GET", "HEAD"])

/** The routes (under `/api/v1`) a viewer may read. */
const viewerReads = [
  /^\/activity(\/|$)/u,
  /^\/credits(\/|$)/u,
  /^\/generation(\/|$|\?)/u,
  // The providers' list (their health); a managed provider's own record is an admin's.
  /^\/providers$/u,
  /^\/audit-log(\/|$)/u,
  /^\/workspaces(\/|$)/u,
  /^\/models(\/|$)/u,
  /^\/batches(\/|$)/u
]

/**
 * The routes a workspace admin or member reaches, each within their workspaces: what only a
 * workspace's admin may do there (its settings, members, budgets, every member's keys) the
 * handlers check against the role, as they do for any member.
 */
const workspaceRoutes = [
  /^\/activity(\/|$)/u,
  /^\/credits$/u,
  /^\/generation(\/|$|\?)/u,
  /^\/keys(\/|$)/u,
  /^\/key$/u,
  /^\/models(\/|$)/u,
  /^\/workspaces\/[^/]+(\/|$)/u
]

/** Whether the method changes something (and so needs the CSRF token when a cookie carries it). */
export const changes = (method: string): boolean => !reads.has(method.toUpperCase()) && method.toUpperCase() !== "OPTIONS"

/**
 * Why the person may not make this call (the role it needs), or `undefined` when they may.
 * `path` is the request's path under `/api/v1` (no query).
 */
export const refusal = (person: PersonShape, method: string, path: string): string | undefined => {
  if (path === "/me") return undefined
  if (person.role === "admin") return undefined
  const needAdmin = "This needs the instance role admin"
  if (/^\/sessions(\/|$)/u.test(path)) return needAdmin
  if (person.role === "viewer") {
    if (changes(method)) return `${needAdmin}: the role viewer reads only`
    return viewerReads.some((r) => r.test(path)) ? undefined : needAdmin
  }
  // Credits are bought for the instance's money: adding them is an instance admin's.
  if (path === "/credits" && changes(method)) return needAdmin
  if (person.workspaces.length > 0 && workspaceRoutes.some((r) => r.test(path))) return undefined
  if (person.workspaces.length > 0 && path === "/workspaces" && !changes(method)) return undefined
  return needAdmin
}

/** The message of a call on a workspace the person has no role in. */
export const noWorkspaceRole = (workspaceId: string) =>
  `This needs the role member (or admin) of workspace ${workspaceId}`
