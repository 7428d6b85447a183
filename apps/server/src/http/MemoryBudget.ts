/**
 * The bytes requests may hold in flight, sized to the memory the process may use: its cgroup's
 * limit (a container's memory limit) when it has one. Above the budget a request with a body is
 * answered 503 with `Retry-After` instead of the process growing until the kernel kills it.
 *
 * **Details**
 *
 * - The limit: cgroup v2 `memory.max`, or cgroup v1 `memory.limit_in_bytes`, of the process's own
 *   cgroup (its path from `/proc/self/cgroup`), else of the hierarchy's root as mounted (inside a
 *   container's cgroup namespace the own cgroup is the root). `max`, or v1's "unlimited" (a value
 *   near 2^63), is no limit.
 * - The budget: half of what the limit leaves above a base of 192 MiB (the process's own memory:
 *   code, heap, the store, buffers), at least 32 MiB: 32 MiB in a 256 MiB container, 160 MiB in
 *   512 MiB, 416 MiB in 1 GiB. Without a limit: a quarter of the machine's memory, at most 2 GiB.
 * - Workers (`SWITCHYARD_WORKERS`) share the container: each counts on its share of the limit (or
 *   of the machine's quarter), so 2 workers in 1 GiB get 160 MiB each, as in 512 MiB alone.
 * - A request's charge: three times its declared body (the bytes, their text, what parsing makes
 *   of them), from when it is taken until its answer is given; the answer's bytes are charged as
 *   well while it is handed to the socket.
 * - A model call is also charged what its answer will hold, once it is planned and before any
 *   upstream call (`http/AnswerAdmission.ts`): more than the whole budget can never be served
 *   (413), more than what is left now may be later (503 with `Retry-After`; a batch line waits).
 * - Every charge has an owner, the workspace and key of the request: alone a tenant may use the
 *   whole budget; under contention it is shared by workspace, and by key within a workspace
 *   (FairShare.ts). The tenant over its share is the one refused, never the one below it, which
 *   waits its turn.
 */
import { Config, Context, Data, Deferred, Duration, Effect, Layer, Option, Schema } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Workers from "../Workers.ts"
import * as FairShare from "./FairShare.ts"

const MiB = 1024 * 1024

/** What the process keeps for itself before any request: code, heap, store, buffers. */
const baseBytes = 192 * MiB
/** The least budget, however small the limit. */
const minimumBudgetBytes = 32 * MiB
/** The budget without a limit: a quarter of the machine, at most this. */
const unlimitedBudgetCap = 2048 * MiB
/** How many bytes a request holds per byte of its body while it is read and parsed. */
const bodyFactor = 3
/** The share of the budget a workspace (or a key of it) may hold under contention, in percent. */
const defaultSharePercent = 25

/** The budget set by the operator, in MiB, instead of the one derived from the limit. */
const BudgetConfig = Config.option(Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)), "SWITCHYARD_MEMORY_BUDGET_MB"))

/** The files a limit is read from, by path: a fixture in tests, the file system in production. */
export type ReadFile = (path: string) => string | undefined

const readReal: ReadFile = (path) => {
  try {
    return Fs.readFileSync(path, "utf8")
  } catch {
    return undefined
  }
}

/** A limit in bytes from a `memory.max` or `memory.limit_in_bytes` text; `undefined` when none. */
export const parseLimit = (text: string | undefined): number | undefined => {
  const value = text?.trim()
  if (value === undefined || value === "" || value === "max") return undefined
  if (!/^\d+$/u.test(value)) return undefined
  const bytes = Number(value)
  // cgroup v1 writes "unlimited" as the largest page-aligned 63-bit value.
  return bytes >= 2 ** 60 ? undefined : bytes
}

/**
 * The process's cgroup paths from `/proc/self/cgroup`: the unified (v2, `0::/path`) one and the
 * v1 memory controller's.
 */
export const cgroupPaths = (text: string | undefined): { readonly v2?: string; readonly v1Memory?: string } => {
  const paths: { v2?: string; v1Memory?: string } = {}
  for (const line of (text ?? "").split("\n")) {
    const match = /^(\d+):([^:]*):(.*)$/u.exec(line.trim())
    if (match === null) continue
    const [, id, controllers, path] = match
    if (id === "0" && controllers === "") paths.v2 = path!
    else if (controllers!.split(",").includes("memory")) paths.v1Memory = path!
  }
  return paths
}

const join = (root: string, path: string) => `${root}${path === "/" ? "" : path.replace(/\/+$/u, "")}`

/** The memory limit of the process's cgroup, v2 first, then v1; `undefined` when it has none. */
export const readLimit = (read: ReadFile = readReal): number | undefined => {
  const paths = cgroupPaths(read("/proc/self/cgroup"))
  const candidates: Array<string> = []
  if (paths.v2 !== undefined) candidates.push(`${join("/sys/fs/cgroup", paths.v2)}/memory.max`)
  candidates.push("/sys/fs/cgroup/memory.max")
  if (paths.v1Memory !== undefined) candidates.push(`${join("/sys/fs/cgroup/memory", paths.v1Memory)}/memory.limit_in_bytes`)
  candidates.push("/sys/fs/cgroup/memory/memory.limit_in_bytes")
  for (const path of candidates) {
    const text = read(path)
    if (text === undefined) continue
    // A file that exists and says "no limit" is the answer for its version.
    return parseLimit(text)
  }
  return undefined
}

/**
 * The in-flight budget of one of `workers` processes under a memory limit (or none: `totalMemory`
 * is the machine's).
 */
export const budgetFor = (limit: number | undefined, totalMemory: number, workers = 1): number =>
  limit === undefined
    ? Math.floor(Math.min(unlimitedBudgetCap, Math.floor(totalMemory / 4)) / workers)
    : Math.max(minimumBudgetBytes, Math.floor((limit / workers - baseBytes) / 2))

/**
 * What the request being served holds of the budget already (its body's charge), set by the
 * request's body admission (RequestBody.ts).
 */
export const RequestCharge = Context.Reference<number>("@switchyard/server/http/MemoryBudget/RequestCharge", {
  defaultValue: () => 0
})

/** What a request with a declared body of `bodyBytes` is charged while it is served. */
export const chargeFor = (bodyBytes: number): number => bodyFactor * bodyBytes

/** Who holds bytes of the budget, from the key that made the request. */
export const ownerOf = (caller: { readonly workspaceId: string; readonly keyId: string }): FairShare.Owner => ({
  workspace: caller.workspaceId,
  key: caller.keyId
})

/**
 * Bytes the budget would not take now: it is full with the asking tenant's own requests
 * (`full`), the tenant holds its share while others wait or hold (`share`), or it waited as long
 * as it may (`busy`).
 */
export class MemoryRefused extends Data.TaggedError("MemoryRefused")<{
  readonly reason: "full" | "share" | "busy"
  readonly level?: "workspace" | "key"
  readonly shareBytes: number
  readonly sharePercent: number
}> {
  override get message(): string {
    if (this.reason !== "share") return "The gateway holds as many request bytes as its memory allows: retry shortly"
    const who = this.level === "key" ? "This key" : "This workspace"
    const beside = this.level === "key" ? "its workspace's other keys" : "other workspaces"
    return `${who} already holds its share of the gateway's request memory (${this.sharePercent}% of the budget, ` +
      `${Math.round(this.shareBytes / MiB)} MiB) while ${beside} need it: retry shortly`
  }
}

/** The share of the budget one workspace (or key) may hold under contention, in percent. */
const ShareConfig = Config.schema(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 100 })), "SWITCHYARD_MEMORY_SHARE_PERCENT").pipe(
  Config.withDefault(defaultSharePercent)
)

interface Waiter {
  readonly owner: FairShare.Owner
  readonly bytes: number
  readonly granted: Deferred.Deferred<void>
}

interface Cuttable {
  readonly owner: FairShare.Owner
  readonly bytes: number
  /** Answers the request now and ends it; `false` when it can no longer be cut (its body is in). */
  readonly cut: (refused: MemoryRefused) => boolean
}

export class MemoryBudget extends Context.Service<MemoryBudget, {
  readonly limitBytes: number | undefined
  /** The gateway processes the limit is shared by (`SWITCHYARD_WORKERS`). */
  readonly workers: number
  readonly budgetBytes: number
  readonly sharePercent: number
  /** Bytes charged to the requests in flight now. */
  readonly heldBytes: () => number
  /** What each workspace holding bytes holds now. */
  readonly heldByWorkspace: () => ReadonlyArray<readonly [workspace: string, held: number]>
  /**
   * Charges `bytes` to `owner` as its share allows: at once, or after waiting in line (at most
   * `waitMs`, on the clock) for what other requests release; else fails with {@link MemoryRefused}
   * and charges nothing. `own` is what the asking request holds already (its body's charge).
   */
  readonly acquire: (owner: FairShare.Owner, bytes: number, options: { readonly waitMs: number; readonly own?: number }) => Effect.Effect<void, MemoryRefused>
  /** Charges `bytes` when the share allows it now, without waiting; the decision either way. */
  readonly tryTake: (owner: FairShare.Owner, bytes: number, own?: number) => FairShare.Decision
  readonly release: (owner: FairShare.Owner, bytes: number) => void
  /** Charges `bytes` whether or not they fit: bytes already made (an answer) must be sent. */
  readonly hold: (owner: FairShare.Owner, bytes: number) => void
  /**
   * Registers a request whose body is still arriving, charged `bytes`: while a request below its
   * share waits, the bodies of tenants over their share may be cut (answered 503 at once) to make
   * room. Returns the registration's removal.
   */
  readonly cuttable: (owner: FairShare.Owner, bytes: number, cut: (refused: MemoryRefused) => boolean) => () => void
}>()("@switchyard/server/http/MemoryBudget") {
  static readonly make = (
    budgetBytes: number,
    limitBytes: number | undefined,
    { sharePercent = defaultSharePercent, workers = 1 }: { readonly sharePercent?: number; readonly workers?: number } = {}
  ) => {
    const holdings = new FairShare.Holdings()
    const limits: FairShare.Limits = { budgetBytes, shareBytes: Math.floor((budgetBytes * sharePercent) / 100) }
    const waiting: Array<Waiter> = []
    const cuttables = new Set<Cuttable>()
    const refused = (decision: FairShare.Decision, reason?: "busy") =>
      new MemoryRefused({
        reason: reason ?? (decision._tag === "OverShare" ? "share" : "full"),
        ...(decision._tag === "OverShare" ? { level: decision.level } : {}),
        shareBytes: limits.shareBytes,
        sharePercent
      })
    // Hands what was released to the requests waiting, in their order, while the first fits.
    const serveWaiting = () => {
      while (waiting.length > 0) {
        const first = waiting[0]!
        if (holdings.total > 0 && holdings.total + first.bytes > budgetBytes) return
        waiting.shift()
        holdings.add(first.owner, first.bytes)
        Deferred.doneUnsafe(first.granted, Effect.void)
      }
    }
    // Cuts the bodies still arriving of the tenants over their share beside `waiter`, latest
    // first, until what they hold would make room for it.
    const makeRoom = (waiter: Waiter) => {
      let needed = holdings.total + waiter.bytes - budgetBytes
      for (const candidate of [...cuttables].reverse()) {
        if (needed <= 0) return
        if (!FairShare.overShareBeside(holdings, candidate.owner, waiter.owner, limits)) continue
        cuttables.delete(candidate)
        const level = candidate.owner.workspace === waiter.owner.workspace ? "key" : "workspace"
        if (candidate.cut(new MemoryRefused({ reason: "share", level, shareBytes: limits.shareBytes, sharePercent }))) needed -= candidate.bytes
      }
    }
    const tryTake = (owner: FairShare.Owner, bytes: number, own = 0) => {
      const decision = FairShare.decide(holdings, waiting.map((w) => w.owner), owner, bytes, limits, own)
      if (decision._tag === "Take") holdings.add(owner, bytes)
      return decision
    }
    const release = (owner: FairShare.Owner, bytes: number) => {
      holdings.remove(owner, bytes)
      serveWaiting()
    }
    const acquire = (owner: FairShare.Owner, bytes: number, options: { readonly waitMs: number; readonly own?: number }) =>
      Effect.suspend((): Effect.Effect<void, MemoryRefused> => {
        const decision = tryTake(owner, bytes, options.own)
        if (decision._tag === "Take") return Effect.void
        if (decision._tag !== "Wait" || options.waitMs <= 0) return Effect.fail(refused(decision))
        const waiter: Waiter = { owner, bytes, granted: Deferred.makeUnsafe<void>() }
        waiting.push(waiter)
        makeRoom(waiter)
        serveWaiting()
        return Deferred.await(waiter.granted).pipe(
          Effect.timeoutOrElse({ duration: Duration.millis(options.waitMs), orElse: () => Effect.fail(refused(decision, "busy")) }),
          Effect.onExit((exit) =>
            Effect.sync(() => {
              if (exit._tag === "Success") return
              const at = waiting.indexOf(waiter)
              if (at !== -1) waiting.splice(at, 1)
              // Granted as it gave up: what was charged goes back.
              else if (Deferred.isDoneUnsafe(waiter.granted)) release(owner, bytes)
              serveWaiting()
            })
          )
        )
      })
    return MemoryBudget.of({
      limitBytes,
      workers,
      budgetBytes,
      sharePercent,
      heldBytes: () => holdings.total,
      heldByWorkspace: () => holdings.workspaces(),
      acquire,
      tryTake,
      release,
      hold: (owner, bytes) => holdings.add(owner, bytes),
      cuttable: (owner, bytes, cut) => {
        const entry: Cuttable = { owner, bytes, cut }
        cuttables.add(entry)
        return () => void cuttables.delete(entry)
      }
    })
  }

  /**
   * The budget of this process, from its cgroup's limit, or as the operator sets it
   * (`SWITCHYARD_MEMORY_BUDGET_MB`, for a limit the gateway cannot see or a heap it knows better),
   * shared under contention by `SWITCHYARD_MEMORY_SHARE_PERCENT`.
   */
  static readonly layer = Layer.effect(
    MemoryBudget,
    Effect.gen(function*() {
      const limit = readLimit()
      const set = yield* BudgetConfig
      const sharePercent = yield* ShareConfig
      const workers = yield* Workers.count
      return MemoryBudget.make(Option.isSome(set) ? set.value * MiB : budgetFor(limit, Os.totalmem(), workers), limit, { sharePercent, workers })
    })
  )
}

/** For the start report: the limit and the budget, in MiB. */
export const describe = (budget: MemoryBudget["Service"]): string =>
  `memory: ${budget.limitBytes === undefined ? "no cgroup limit" : `cgroup limit ${Math.round(budget.limitBytes / MiB)} MiB`}` +
  `${budget.workers <= 1 ? "" : budget.limitBytes === undefined ? `, ${budget.workers} workers` : ` shared by ${budget.workers} workers`}, ` +
  `request bytes in flight at most ${Math.round(budget.budgetBytes / MiB)} MiB${budget.workers > 1 ? " each" : ""}, ` +
  `${budget.sharePercent}% of it per workspace while others need it`
