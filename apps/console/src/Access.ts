/**
 * What the one signed in may see and do in the console: the one rule every page and button asks,
 * so that the console never offers what the gateway would refuse with a 403.
 *
 * - A standard key: its own usage, the providers, the route playground, its batches and interns.
 * - A management key: everything the console had before people signed in (its user's keys,
 *   workspaces, budgets and credits, providers, audit log); the sessions of people too when the
 *   gateway says the key is an instance administrator's.
 * - A person signed in by single sign-on, by role:
 *   - instance `admin`: everything, sessions of people included (but the route playground, whose
 *     model calls take a standard key: a person's browser holds no key);
 *   - `viewer`: read-only activity, money, providers' health, batches and the audit log; no
 *     change, no key, no secret, no model call (whatever workspace roles come with it);
 *   - workspace `admin`: their workspaces' usage and budgets, their budgets and cache setting, and
 *     every key of theirs;
 *   - workspace `member`: their workspaces' usage and budgets, and only the keys they created.
 *   Providers are the instance's (admins change them, viewers read them), as the gateway's table
 *   of the roles' reach has it (apps/server/src/auth/Access.ts).
 */

export type InstanceRole = "admin" | "viewer"
type WorkspaceRole = "admin" | "member"

export interface WorkspaceGrant {
  readonly id: string
  readonly role: WorkspaceRole
}

/** Who is signed in, as far as the rule needs to know. */
export type Principal =
  | { readonly _tag: "StandardKey" }
  | { readonly _tag: "ManagementKey"; readonly administrator: boolean }
  | {
    readonly _tag: "Person"
    readonly userId: string
    readonly role: InstanceRole | null
    readonly workspaces: ReadonlyArray<WorkspaceGrant>
  }

export type PageId = "overview" | "keys" | "workspaces" | "providers" | "playground" | "batches" | "interns" | "audit" | "sessions"

/** The pages in the order the navigation lists them. */
export const pageOrder: ReadonlyArray<PageId> = ["overview", "keys", "workspaces", "providers", "playground", "batches", "interns", "audit", "sessions"]

/** A key as the rule sees it: where it lives and who created it. */
interface KeyFacts {
  readonly workspace_id: string
  readonly creator_user_id: string | null
}

export interface Access {
  /** The pages shown, in navigation order. */
  readonly pages: ReadonlyArray<PageId>
  /** Nothing may be changed: no create, edit or delete anywhere. */
  readonly readOnly: boolean
  /**
   * Add, edit, rotate, enable, disable, delete and test providers: instance administrators (for a
   * management key, the providers page also asks the gateway, which marks providers' `source`
   * for administrators only).
   */
  readonly manageProviders: boolean
  /** The workspace's own provider credentials (bring your own key) are listed. */
  readonly seeOwnProviderKeys: boolean
  /** The workspaces' budgets are shown. */
  readonly seeBudgets: boolean
  /** The endpoints' measured error rates and latencies (providers' health) are shown. */
  readonly seeProviderHealth: boolean
  /** Set budgets and switch the cache of this workspace. */
  readonly manageWorkspace: (workspaceId: string) => boolean
  /** Create keys in this workspace. */
  readonly createKeys: (workspaceId: string) => boolean
  /** Change this key's limits, disable or enable it. */
  readonly manageKey: (key: KeyFacts) => boolean
  /** Cancel batches (a key's own, or as an instance administrator). */
  readonly cancelBatches: boolean
  /** End sessions of people. */
  readonly manageSessions: boolean
}

const everything = (administrator: boolean): Access => ({
  pages: pageOrder.filter((page) => page !== "sessions" || administrator),
  readOnly: false,
  manageProviders: true,
  seeOwnProviderKeys: true,
  seeBudgets: true,
  seeProviderHealth: true,
  manageWorkspace: () => true,
  createKeys: () => true,
  manageKey: () => true,
  cancelBatches: true,
  manageSessions: administrator
})

const nothing = {
  readOnly: true,
  manageProviders: false,
  seeOwnProviderKeys: false,
  seeBudgets: false,
  seeProviderHealth: false,
  manageWorkspace: () => false,
  createKeys: () => false,
  manageKey: () => false,
  cancelBatches: false,
  manageSessions: false
} as const

const person = (userId: string, role: InstanceRole | null, workspaces: ReadonlyArray<WorkspaceGrant>): Access => {
  if (role === "admin") {
    // No route playground: its model calls take a standard key, and a person's browser holds none.
    const all = everything(true)
    return { ...all, pages: all.pages.filter((page) => page !== "playground"), seeOwnProviderKeys: false }
  }
  // The instance role viewer reads, and only reads, whatever workspace roles come with it.
  if (role === "viewer") {
    return { ...nothing, pages: ["overview", "workspaces", "providers", "batches", "audit"], seeBudgets: true, seeProviderHealth: true }
  }
  const grant = (workspaceId: string) => workspaces.find((workspace) => workspace.id === workspaceId)?.role
  return {
    ...nothing,
    pages: workspaces.length > 0 ? ["overview", "keys", "workspaces"] : [],
    readOnly: workspaces.length === 0,
    seeBudgets: workspaces.length > 0,
    manageWorkspace: (workspaceId) => grant(workspaceId) === "admin",
    createKeys: (workspaceId) => grant(workspaceId) !== undefined,
    manageKey: (key) => grant(key.workspace_id) === "admin" || (grant(key.workspace_id) === "member" && key.creator_user_id === userId)
  }
}

/**
 * What `principal` may see and do.
 */
export const of = (principal: Principal): Access => {
  switch (principal._tag) {
    case "StandardKey":
      return { ...nothing, readOnly: false, seeBudgets: true, seeProviderHealth: true, cancelBatches: true, pages: ["overview", "providers", "playground", "batches", "interns"] }
    case "ManagementKey":
      return everything(principal.administrator)
    case "Person":
      return person(principal.userId, principal.role, principal.workspaces)
  }
}

/** Whether `access` is enough to see anything at all (a person in no mapped group is not). */
export const seesAnything = (access: Access): boolean => access.pages.length > 0
