/**
 * How the memory budget (MemoryBudget.ts) is shared between tenants: work-conserving fair shares
 * by workspace, and by key within a workspace. Data and one pure decision; the budget does the
 * waiting.
 *
 * **Details**
 *
 * - Alone, a tenant may use the whole budget: a request that fits beside what is held while
 *   nobody waits is taken, whatever its tenant holds (a single-tenant install is served as it was
 *   before shares existed), and a request alone (nothing else held) is always taken.
 * - Under contention (the request does not fit beside what is held, or a request is already
 *   waiting) a workspace that already holds its share (`SWITCHYARD_MEMORY_SHARE`, a fraction of
 *   the budget, 25 % by default) or more, while another workspace holds bytes or waits, is refused
 *   (`OverShare`: 503 with `Retry-After`, naming the share). Within a workspace the same holds for
 *   a key beside the workspace's other keys.
 * - A request below its share waits (`Wait`), first come first served, until what is released
 *   makes room; the budget may cut the bodies still arriving of the tenants over their share to
 *   make that room sooner.
 * - A lone tenant whose request does not fit, with nobody else holding or waiting, is refused
 *   as before shares (`Full`: 503 with `Retry-After`): its own requests are what holds the bytes.
 */

/** Who holds bytes of the budget: the workspace of the request's key, and the key. */
export interface Owner {
  readonly workspace: string
  readonly key: string
}

interface WorkspaceHoldings {
  held: number
  readonly keys: Map<string, number>
}

/** What each tenant holds of the budget now. */
export class Holdings {
  total = 0
  private readonly byWorkspace = new Map<string, WorkspaceHoldings>()

  add(owner: Owner, bytes: number): void {
    this.total += bytes
    let workspace = this.byWorkspace.get(owner.workspace)
    if (workspace === undefined) {
      workspace = { held: 0, keys: new Map() }
      this.byWorkspace.set(owner.workspace, workspace)
    }
    workspace.held += bytes
    workspace.keys.set(owner.key, (workspace.keys.get(owner.key) ?? 0) + bytes)
  }

  remove(owner: Owner, bytes: number): void {
    this.total -= bytes
    const workspace = this.byWorkspace.get(owner.workspace)
    if (workspace === undefined) return
    workspace.held -= bytes
    const key = (workspace.keys.get(owner.key) ?? 0) - bytes
    if (key <= 0) workspace.keys.delete(owner.key)
    else workspace.keys.set(owner.key, key)
    if (workspace.held <= 0 && workspace.keys.size === 0) this.byWorkspace.delete(owner.workspace)
  }

  workspaceHeld(workspace: string): number {
    return this.byWorkspace.get(workspace)?.held ?? 0
  }

  keyHeld(owner: Owner): number {
    return this.byWorkspace.get(owner.workspace)?.keys.get(owner.key) ?? 0
  }

  /** Each workspace holding bytes, with what it holds. */
  workspaces(): ReadonlyArray<readonly [workspace: string, held: number]> {
    return [...this.byWorkspace].filter(([, w]) => w.held > 0).map(([id, w]) => [id, w.held] as const)
  }

  /** Whether a workspace other than `workspace` holds bytes. */
  otherWorkspaceHolds(workspace: string): boolean {
    for (const [id, w] of this.byWorkspace) if (id !== workspace && w.held > 0) return true
    return false
  }

  /** Whether another key of `owner`'s workspace holds bytes. */
  otherKeyHolds(owner: Owner): boolean {
    const keys = this.byWorkspace.get(owner.workspace)?.keys
    if (keys === undefined) return false
    for (const [key, held] of keys) if (key !== owner.key && held > 0) return true
    return false
  }
}

export type Decision =
  | { readonly _tag: "Take" }
  | { readonly _tag: "Wait" }
  | { readonly _tag: "Full" }
  | {
    readonly _tag: "OverShare"
    /** Whether the workspace holds its share beside other workspaces, or the key beside its workspace's other keys. */
    readonly level: "workspace" | "key"
    readonly heldBytes: number
    readonly shareBytes: number
  }

export interface Limits {
  readonly budgetBytes: number
  /** What one workspace (or one key of a workspace) may hold under contention. */
  readonly shareBytes: number
}

/** Whether another tenant at `owner`'s level competes: holds bytes, or waits. */
const contenders = (holdings: Holdings, waiting: ReadonlyArray<Owner>, owner: Owner) => ({
  workspaces: holdings.otherWorkspaceHolds(owner.workspace) || waiting.some((w) => w.workspace !== owner.workspace),
  keys: holdings.otherKeyHolds(owner) || waiting.some((w) => w.workspace === owner.workspace && w.key !== owner.key)
})

/**
 * What to do with `bytes` asked by `owner`, beside `holdings` and the requests `waiting` (in
 * order). `own` is what the asking request holds already (its body's charge), which does not
 * count against it being alone.
 */
export const decide = (
  holdings: Holdings,
  waiting: ReadonlyArray<Owner>,
  owner: Owner,
  bytes: number,
  limits: Limits,
  own = 0
): Decision => {
  if (waiting.length === 0 && (holdings.total - own <= 0 || holdings.total + bytes <= limits.budgetBytes)) return { _tag: "Take" }
  const competing = contenders(holdings, waiting, owner)
  const workspaceHeld = holdings.workspaceHeld(owner.workspace)
  if (competing.workspaces && workspaceHeld >= limits.shareBytes) {
    return { _tag: "OverShare", level: "workspace", heldBytes: workspaceHeld, shareBytes: limits.shareBytes }
  }
  const keyHeld = holdings.keyHeld(owner)
  if (competing.keys && keyHeld >= limits.shareBytes) {
    return { _tag: "OverShare", level: "key", heldBytes: keyHeld, shareBytes: limits.shareBytes }
  }
  if (!competing.workspaces && !competing.keys) return { _tag: "Full" }
  return { _tag: "Wait" }
}

/**
 * Whether `holder` holds its share beside `waiter` competing with it: the tenants whose bodies
 * still arriving may be cut to make room for a waiter below its share.
 */
export const overShareBeside = (holdings: Holdings, holder: Owner, waiter: Owner, limits: Limits): boolean =>
  holder.workspace !== waiter.workspace
    ? holdings.workspaceHeld(holder.workspace) >= limits.shareBytes
    : holder.key !== waiter.key && holdings.keyHeld(holder) >= limits.shareBytes
