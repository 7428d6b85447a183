/**
 * The money store's rules as one reference model in memory: what a grant, a hand-back, a flush, a
 * sweep and the other operations of the money store (`MoneyStorePort` in the server) do to the
 * books, written once from core's rules (`SpendLease.grantFrom`, `FencedLease.settlesMoved`,
 * `UsageWindow.startsAt`). The property suite runs generated sequences of operations against this
 * model and against each store (SQLite's TypeScript, PostgreSQL's PL/pgSQL) and asserts the same
 * answers and the same books.
 *
 * **Details**
 *
 * - Money is `bigint` nano-USD; times are epoch milliseconds given by the caller (the store's
 *   clock): nothing here reads a clock or does I/O.
 * - A spend counter's day is its UTC date (`YYYY-MM-DD`), the all-time row `-infinity`, as both
 *   stores date them; a limit window counts the day rows from its first day on, no window the
 *   all-time row alone.
 * - Fencing tokens are the model's own sequence; the stores' tokens differ in value (PostgreSQL's
 *   sequence advances on every upsert), so the suite compares tokens by order of first appearance.
 * - The model state is mutable and private to one {@link make}: one model per sequence.
 *
 * @since 0.4.0
 */
import * as FencedLease from "./FencedLease.ts"
import * as SpendLease from "./SpendLease.ts"
import * as UsageWindow from "./UsageWindow.ts"

const maxBig = 9223372036854775807n

/**
 * A key as the store has it.
 *
 * @since 0.4.0
 */
export interface KeySpec {
  readonly id: string
  readonly workspace: string
  readonly limit: bigint | null
  /** `daily`, `weekly`, `monthly`, or `null` for all time. */
  readonly reset: string | null
  readonly includeByokInLimit: boolean
}

/**
 * A workspace as the store has it: its budgets (`daily`, `weekly`, `monthly`, `lifetime`).
 *
 * @since 0.4.0
 */
export interface WorkspaceSpec {
  readonly id: string
  readonly includeByokInBudgets: boolean
  readonly budgets: ReadonlyArray<{ readonly interval: string; readonly limit: bigint }>
}

/**
 * A hold (a lease's row).
 *
 * @since 0.4.0
 */
export interface Hold {
  readonly id: string
  readonly key: string
  readonly workspace: string
  readonly amount: bigint
  readonly byok: boolean
  readonly expiresAtMs: number
  readonly owner: string
  readonly fence: string
}

/**
 * A grant's request, as the store's port takes it.
 *
 * @since 0.4.0
 */
export interface Grant {
  readonly id: string
  readonly owner: string
  readonly keyId: string
  readonly workspaceId: string
  readonly byok: boolean
  readonly ask: SpendLease.Ask
  readonly nowMs: number
  /** The lease row lives until at least then. */
  readonly expiresAtMs: number
}

/**
 * A grant's answer, as the store's port gives it: `ok` with what was granted, the room left and the
 * lease row's fencing token (`null` when no row holds anything), or the refusing scope with its
 * limit, window and room.
 *
 * **When to use**
 *
 * The server's money port narrows `Outcome` to its closed list of outcomes; the model answers any
 * string the stores may answer.
 *
 * @since 0.4.0
 */
export interface GrantOutcome<Outcome extends string = string> {
  readonly outcome: Outcome
  readonly granted: bigint | null
  readonly limit: bigint | null
  readonly reset: string | null
  readonly room: bigint | null
  readonly fence: string | null
}

/**
 * A refused grant's answer: the refusing scope, with whatever of its limit, window and room the
 * refusal reports; the rest `null`.
 *
 * @since 0.4.0
 */
export const refused = <Outcome extends string>(
  outcome: Outcome,
  more: Partial<Omit<GrantOutcome<Outcome>, "outcome">> = {}
): GrantOutcome<Outcome> => ({
  outcome,
  granted: null,
  limit: null,
  reset: null,
  room: null,
  fence: null,
  ...more
})

/**
 * A ledger row a flush is given (its lease and the token it was admitted under, `null`: none).
 *
 * @since 0.4.0
 */
export interface Row {
  readonly generation: string
  readonly key: string
  readonly workspace: string
  readonly cost: bigint
  readonly byok: boolean
  readonly createdMs: number
  readonly lease: string | null
  readonly fence: string | null
}

/**
 * What became of a flushed row: its cost (`null`: not written now and none before), whether it
 * was written now, and whether its lease had moved (it was settled under the current room).
 *
 * @since 0.4.0
 */
export interface Flushed {
  readonly generation: string
  readonly cost: bigint | null
  readonly written: boolean
  readonly fenced: boolean
}

/**
 * The books: ledger rows, spend counters (rows with nothing spent left out), credit accounts
 * (those with anything in them), holds and process rows.
 *
 * @since 0.4.0
 */
export interface Books {
  readonly ledger: ReadonlyArray<{ readonly generation: string; readonly key: string; readonly cost: bigint; readonly byok: boolean }>
  readonly keySpend: ReadonlyArray<{ readonly key: string; readonly day: string; readonly spent: bigint; readonly byok: bigint }>
  readonly workspaceSpend: ReadonlyArray<{ readonly workspace: string; readonly day: string; readonly spent: bigint; readonly byok: bigint }>
  readonly accounts: ReadonlyArray<{ readonly workspace: string; readonly credits: bigint; readonly usage: bigint; readonly prepaid: boolean }>
  readonly holds: ReadonlyArray<Hold>
  readonly processes: ReadonlyArray<{ readonly id: string; readonly seenMs: number }>
}

/** The UTC day of an epoch-milliseconds time, as the spend counters date it. */
const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10)

/** The all-time counter row's day. */
const allTime = "-infinity"

/** The first day of a window (`undefined`: all time, the `-infinity` row alone). */
const windowStart = (reset: string | null, nowMs: number): string | undefined => {
  const starts = UsageWindow.startsAt(new Date(nowMs))
  switch (reset) {
    case "daily":
      return dayOf(starts.day.getTime())
    case "weekly":
      return dayOf(starts.week.getTime())
    case "monthly":
      return dayOf(starts.month.getTime())
    default:
      return undefined
  }
}

const inWindow = (day: string, from: string | undefined): boolean => (from === undefined ? day === allTime : day !== allTime && day >= from)

/** The model's books in memory, mutable, private to one {@link make}. */
interface State {
  readonly keys: ReadonlyMap<string, KeySpec>
  readonly workspaces: ReadonlyMap<string, WorkspaceSpec>
  readonly holds: Map<string, Hold>
  /** The last fencing token given. */
  nextFence: number
  readonly ledger: Map<string, { key: string; cost: bigint; byok: boolean }>
  readonly keySpend: Map<string, { key: string; day: string; spent: bigint; byok: bigint }>
  readonly workspaceSpend: Map<string, { workspace: string; day: string; spent: bigint; byok: bigint }>
  readonly accounts: Map<string, { credits: bigint; usage: bigint; prepaid: boolean }>
  /** When each gateway process was last seen. */
  readonly processes: Map<string, number>
}

/** A workspace's credit account, opened (no credits, not prepaid) when it has none. */
const account = (state: State, workspace: string) => {
  const found = state.accounts.get(workspace)
  if (found !== undefined) return found
  const opened = { credits: 0n, usage: 0n, prepaid: false }
  state.accounts.set(workspace, opened)
  return opened
}

const seen = (state: State, owner: string, nowMs: number) => state.processes.set(owner, Math.max(state.processes.get(owner) ?? nowMs, nowMs))

/** What the holds matching `match` and not expired at `nowMs` hold, but `exclude`. */
const heldBy = (state: State, match: (h: Hold) => boolean, nowMs: number, exclude: string) =>
  [...state.holds.values()].filter((h) => h.expiresAtMs > nowMs && h.id !== exclude && match(h)).reduce((sum, h) => sum + h.amount, 0n)

const spentIn = (
  rows: Iterable<{ readonly day: string; readonly spent: bigint; readonly byok: bigint }>,
  from: string | undefined,
  includeByok: boolean
) => [...rows].filter((r) => inWindow(r.day, from)).reduce((sum, r) => sum + r.spent + (includeByok ? r.byok : 0n), 0n)

/** The room each scope leaves: a key's limit, a workspace's budgets (the least), its prepaid credits. */
const keyRoom = (state: State, key: KeySpec, limit: bigint, nowMs: number, exclude: string) => {
  const spent = spentIn([...state.keySpend.values()].filter((r) => r.key === key.id), windowStart(key.reset, nowMs), key.includeByokInLimit)
  const held = heldBy(state, (h) => h.key === key.id && (!h.byok || key.includeByokInLimit), nowMs, exclude)
  return limit - spent - held
}

const budgetRoom = (state: State, workspaceId: string, byok: boolean, nowMs: number, exclude: string) => {
  const workspace = state.workspaces.get(workspaceId)
  if (workspace === undefined || workspace.budgets.length === 0) return undefined
  const includeByok = workspace.includeByokInBudgets
  if (byok && !includeByok) return undefined
  account(state, workspaceId)
  const held = heldBy(state, (h) => h.workspace === workspaceId && (!h.byok || includeByok), nowMs, exclude)
  let least: { interval: string; limit: bigint; room: bigint } | undefined
  for (const budget of workspace.budgets) {
    const rows = [...state.workspaceSpend.values()].filter((r) => r.workspace === workspaceId)
    const room = budget.limit - spentIn(rows, windowStart(budget.interval, nowMs), includeByok) - held
    if (least === undefined || room < least.room) least = { interval: budget.interval, limit: budget.limit, room }
  }
  return least
}

const balanceRoom = (state: State, workspaceId: string, nowMs: number, exclude: string) => {
  const a = account(state, workspaceId)
  if (!a.prepaid) return maxBig
  return a.credits - a.usage - heldBy(state, (h) => h.workspace === workspaceId && !h.byok, nowMs, exclude)
}

/** A grant to a lease: the checks of a reservation, then `SpendLease.grantFrom` of the least room. */
const grant = (state: State, r: Grant): GrantOutcome => {
  const key = state.keys.get(r.keyId)
  if (key === undefined) return refused("key_deleted")
  if (key.workspace !== r.workspaceId) return refused("wrong_workspace")
  const now = r.nowMs
  for (const h of [...state.holds.values()]) if (h.key === r.keyId && h.expiresAtMs <= now && h.id !== r.id) state.holds.delete(h.id)
  const own = state.holds.get(r.id)
  const held = own?.amount ?? 0n
  let avail = maxBig
  if (key.limit !== null && (!r.byok || key.includeByokInLimit)) {
    const room = keyRoom(state, key, key.limit, now, r.id) - held
    if (r.ask.need > room) return refused("key_limit", { limit: key.limit, reset: key.reset, room })
    if (room < avail) avail = room
  }
  const budget = budgetRoom(state, r.workspaceId, r.byok, now, r.id)
  if (budget !== undefined) {
    const room = budget.room - held
    if (r.ask.need > room) return refused("workspace_budget", { limit: budget.limit, reset: budget.interval, room })
    if (room < avail) avail = room
  }
  if (!r.byok) {
    const balance = balanceRoom(state, r.workspaceId, now, r.id)
    if (balance < maxBig) {
      const room = balance - held
      if (r.ask.need > room) return refused("workspace_credits", { room })
      if (room < avail) avail = room
    }
  }
  const granted = SpendLease.grantFrom(avail, r.ask) ?? r.ask.need
  seen(state, r.owner, now)
  return { outcome: "ok", granted, limit: null, reset: null, room: avail - granted, fence: take(state, r, own, granted) }
}

/** The lease row after a grant of `granted`: created with the next token, or grown; its token (`null`: no row). */
const take = (state: State, r: Grant, own: Hold | undefined, granted: bigint): string | null => {
  if (own === undefined && granted > 0n) {
    state.nextFence += 1
    const fence = String(state.nextFence)
    state.holds.set(r.id, {
      id: r.id,
      key: r.keyId,
      workspace: r.workspaceId,
      amount: granted,
      byok: r.byok,
      expiresAtMs: r.expiresAtMs,
      owner: r.owner,
      fence
    })
    return fence
  }
  if (own === undefined) return null
  state.holds.set(r.id, { ...own, amount: own.amount + granted, expiresAtMs: Math.max(own.expiresAtMs, r.expiresAtMs) })
  return own.fence
}

/** A row's cost added to its key's and workspace's day and all-time counters and, not BYOK, to its workspace's usage. */
const count = (state: State, row: Row, cost: bigint) => {
  if (cost === 0n) return
  for (const day of [dayOf(row.createdMs), allTime]) {
    const k = state.keySpend.get(`${row.key}|${day}`) ?? { key: row.key, day, spent: 0n, byok: 0n }
    const w = state.workspaceSpend.get(`${row.workspace}|${day}`) ?? { workspace: row.workspace, day, spent: 0n, byok: 0n }
    state.keySpend.set(`${row.key}|${day}`, row.byok ? { ...k, byok: k.byok + cost } : { ...k, spent: k.spent + cost })
    state.workspaceSpend.set(`${row.workspace}|${day}`, row.byok ? { ...w, byok: w.byok + cost } : { ...w, spent: w.spent + cost })
  }
  if (!row.byok) {
    const a = account(state, row.workspace)
    state.accounts.set(row.workspace, { ...a, usage: a.usage + cost })
  }
}

/** A row whose lease moved, settled under the current room (`FencedLease.settlesMoved`): written when it fits. */
const settleMoved = (state: State, row: Row, nowMs: number): Flushed => {
  const before = state.ledger.get(row.generation)?.cost ?? null
  let fits = before === null
  if (fits && row.cost > 0n) {
    const key = state.keys.get(row.key)
    const keyLeft = key !== undefined && key.limit !== null && (!row.byok || key.includeByokInLimit)
      ? keyRoom(state, key, key.limit, nowMs, "")
      : undefined
    const balance = row.byok ? maxBig : balanceRoom(state, row.workspace, nowMs, "")
    fits = FencedLease.settlesMoved(row.cost, [keyLeft, budgetRoom(state, row.workspace, row.byok, nowMs, "")?.room, balance < maxBig ? balance : undefined])
  }
  if (fits) {
    state.ledger.set(row.generation, { key: row.key, cost: row.cost, byok: row.byok })
    count(state, row, row.cost)
  }
  return { generation: row.generation, cost: fits ? row.cost : before, written: fits, fenced: true }
}

/**
 * A batch of rows at `nowMs`, one transaction: rows whose lease moved are settled first under the
 * current room (`FencedLease.settlesMoved`), then the others are written with their counters, and
 * each lease used gives up what its rows cost and lives until at least `expiresAtMs`.
 */
const flush = (state: State, rows: ReadonlyArray<Row>, expiresAtMs: number, nowMs: number): ReadonlyArray<Flushed> => {
  const fences = new Map<string, string | null>()
  for (const row of rows) if (row.lease !== null && !fences.has(row.lease)) fences.set(row.lease, state.holds.get(row.lease)?.fence ?? null)
  // A row is written under its lease's current token only (no token, like no row, is not one: SQL's NULL = NULL).
  const moved = (row: Row) => {
    if (row.lease === null) return false
    const stored = fences.get(row.lease) ?? null
    return stored === null || stored !== row.fence
  }
  const out = new Map<string, Flushed>()
  for (const row of rows.filter(moved)) out.set(row.generation, settleMoved(state, row, nowMs))
  const leases = new Map<string, bigint>()
  for (const row of rows.filter((r) => !moved(r))) {
    const before = state.ledger.get(row.generation)
    if (before !== undefined) {
      out.set(row.generation, { generation: row.generation, cost: before.cost, written: false, fenced: false })
      continue
    }
    state.ledger.set(row.generation, { key: row.key, cost: row.cost, byok: row.byok })
    count(state, row, row.cost)
    if (row.lease !== null) leases.set(row.lease, (leases.get(row.lease) ?? 0n) + row.cost)
    out.set(row.generation, { generation: row.generation, cost: row.cost, written: true, fenced: false })
  }
  for (const [lease, spent] of leases) {
    const h = state.holds.get(lease)
    if (h === undefined) continue
    const left = h.amount - spent
    state.holds.set(lease, { ...h, amount: left > 0n ? left : 0n, expiresAtMs: Math.max(h.expiresAtMs, expiresAtMs) })
  }
  return rows.map((r) => out.get(r.generation)!)
}

/** The operations on the registry of gateway processes, and the sweep of dead ones' holds. */
const processOps = (state: State) => ({
  heartbeat: (id: string, nowMs: number) => {
    seen(state, id, nowMs)
  },
  /** Deletes the rows of processes unseen since `nowMs - staleMs` (but `self`'s), then the holds of every owner without a live row. */
  sweep: (self: string, staleMs: number, nowMs: number): number => {
    const since = nowMs - staleMs
    for (const [id, seenMs] of [...state.processes]) if (id !== self && seenMs < since) state.processes.delete(id)
    let swept = 0
    for (const h of [...state.holds.values()]) {
      const seenMs = state.processes.get(h.owner)
      if (h.owner !== self && (seenMs === undefined || seenMs < since)) {
        state.holds.delete(h.id)
        swept += 1
      }
    }
    return swept
  },
  claim: (self: string) => {
    for (const h of [...state.holds.values()]) if (h.owner !== self) state.holds.delete(h.id)
    for (const id of [...state.processes.keys()]) if (id !== self) state.processes.delete(id)
  },
  end: (self: string) => {
    for (const h of [...state.holds.values()]) if (h.owner === self) state.holds.delete(h.id)
    state.processes.delete(self)
  },
  live: (staleMs: number, nowMs: number): number => [...state.processes.values()].filter((s) => s >= nowMs - staleMs).length
})

const books = (state: State): Books => ({
  ledger: [...state.ledger].map(([generation, r]) => ({ generation, ...r })),
  keySpend: [...state.keySpend.values()],
  workspaceSpend: [...state.workspaceSpend.values()],
  accounts: [...state.accounts].filter(([, a]) => a.credits !== 0n || a.usage !== 0n || a.prepaid).map(([workspace, a]) => ({ workspace, ...a })),
  holds: [...state.holds.values()],
  processes: [...state.processes].map(([id, seenMs]) => ({ id, seenMs }))
})

/**
 * A model of the money store over the given keys and workspaces.
 *
 * @since 0.4.0
 */
export const make = (setup: { readonly keys: ReadonlyArray<KeySpec>; readonly workspaces: ReadonlyArray<WorkspaceSpec> }) => {
  const state: State = {
    keys: new Map(setup.keys.map((k) => [k.id, k])),
    workspaces: new Map(setup.workspaces.map((w) => [w.id, w])),
    holds: new Map(),
    nextFence: 0,
    ledger: new Map(),
    keySpend: new Map(),
    workspaceSpend: new Map(),
    accounts: new Map(),
    processes: new Map()
  }
  return {
    grant: (r: Grant): GrantOutcome => grant(state, r),
    handBack: (id: string, amount: bigint) => {
      const h = state.holds.get(id)
      if (h === undefined) return
      if (h.amount <= amount) state.holds.delete(id)
      else state.holds.set(id, { ...h, amount: h.amount - amount })
    },
    end: (id: string, fence: string) => {
      if (state.holds.get(id)?.fence === fence) state.holds.delete(id)
    },
    readLease: (id: string) => {
      const h = state.holds.get(id)
      return h === undefined ? undefined : { amount: h.amount, fence: h.fence }
    },
    flush: (rows: ReadonlyArray<Row>, expiresAtMs: number, nowMs: number): ReadonlyArray<Flushed> => flush(state, rows, expiresAtMs, nowMs),
    credits: (workspaceId: string, nowMs: number) => {
      const a = state.accounts.get(workspaceId)
      return { credits: a?.credits ?? 0n, usage: a?.usage ?? 0n, held: heldBy(state, (h) => h.workspace === workspaceId && !h.byok, nowMs, "") }
    },
    addCredits: (workspaceId: string, amount: bigint) => {
      const a = account(state, workspaceId)
      state.accounts.set(workspaceId, { ...a, credits: a.credits + amount, prepaid: true })
    },
    processes: processOps(state),
    books: () => books(state)
  }
}
