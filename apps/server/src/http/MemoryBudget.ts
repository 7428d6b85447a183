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
 */
import { Config, Context, Effect, Layer, Option, Schema } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Workers from "../Workers.ts"

const MiB = 1024 * 1024

/** What the process keeps for itself before any request: code, heap, store, buffers. */
const baseBytes = 192 * MiB
/** The least budget, however small the limit. */
const minimumBudgetBytes = 32 * MiB
/** The budget without a limit: a quarter of the machine, at most this. */
const unlimitedBudgetCap = 2048 * MiB
/** How many bytes a request holds per byte of its body while it is read and parsed. */
const bodyFactor = 3

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
 * request policies for the route.
 */
export const RequestCharge = Context.Reference<number>("@switchyard/server/http/MemoryBudget/RequestCharge", {
  defaultValue: () => 0
})

/** What a request with a declared body of `bodyBytes` is charged while it is served. */
export const chargeFor = (bodyBytes: number): number => bodyFactor * bodyBytes

export class MemoryBudget extends Context.Service<MemoryBudget, {
  readonly limitBytes: number | undefined
  /** The gateway processes the limit is shared by (`SWITCHYARD_WORKERS`). */
  readonly workers: number
  readonly budgetBytes: number
  /** Bytes charged to the requests in flight now. */
  readonly heldBytes: () => number
  /** Charges `bytes` when they fit (and returns `true`), or returns `false` and charges nothing. */
  readonly take: (bytes: number) => boolean
  readonly release: (bytes: number) => void
  /** Charges `bytes` whether or not they fit: bytes already made (an answer) must be sent. */
  readonly hold: (bytes: number) => void
  /**
   * Charges `bytes` when they fit beside what is held now (`taken`); otherwise charges nothing and
   * says whether they could ever fit (`later`) or exceed the whole budget (`never`). `own` is what
   * the asking request holds already (its body's charge): a request that nothing else holds beside
   * is let through, as by {@link take}, when `bytes` fit the budget.
   */
  readonly admit: (bytes: number, own?: number) => "taken" | "later" | "never"
}>()("@switchyard/server/http/MemoryBudget") {
  static readonly make = (budgetBytes: number, limitBytes: number | undefined, workers = 1) => {
    let held = 0
    return MemoryBudget.of({
      limitBytes,
      workers,
      budgetBytes,
      heldBytes: () => held,
      take: (bytes) => {
        // One request alone is always let through: the body limit bounds it.
        if (held > 0 && held + bytes > budgetBytes) return false
        held += bytes
        return true
      },
      release: (bytes) => {
        held -= bytes
      },
      hold: (bytes) => {
        held += bytes
      },
      admit: (bytes, own = 0) => {
        if (bytes > budgetBytes) return "never"
        if (held > own && held + bytes > budgetBytes) return "later"
        held += bytes
        return "taken"
      }
    })
  }

  /**
   * The budget of this process, from its cgroup's limit, or as the operator sets it
   * (`SWITCHYARD_MEMORY_BUDGET_MB`, for a limit the gateway cannot see or a heap it knows better).
   */
  static readonly layer = Layer.effect(
    MemoryBudget,
    Effect.gen(function*() {
      const limit = readLimit()
      const set = yield* BudgetConfig
      const workers = yield* Workers.count
      return MemoryBudget.make(Option.isSome(set) ? set.value * MiB : budgetFor(limit, Os.totalmem(), workers), limit, workers)
    })
  )
}

/** For the start report: the limit and the budget, in MiB. */
export const describe = (budget: MemoryBudget["Service"]): string =>
  `memory: ${budget.limitBytes === undefined ? "no cgroup limit" : `cgroup limit ${Math.round(budget.limitBytes / MiB)} MiB`}` +
  `${budget.workers <= 1 ? "" : budget.limitBytes === undefined ? `, ${budget.workers} workers` : ` shared by ${budget.workers} workers`}, ` +
  `request bytes in flight at most ${Math.round(budget.budgetBytes / MiB)} MiB${budget.workers > 1 ? " each" : ""}`
