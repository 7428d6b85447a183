/**
 * `pnpm bench --cgroup`: the gateway as a container runs it, inside a memory cgroup of each given
 * limit. For each limit: the first start on an empty data dir and a restart on the store it made
 * (wall time from spawn to the first answer), the idle RSS, then each load cell in turn; every
 * answer's status is counted and the cgroup's own accounting (high-water mark, OOM kills) read.
 *
 * The cgroup is the kernel's: cgroup v1's memory controller (`/sys/fs/cgroup/memory`) or cgroup v2
 * (`memory.max`), made under the bench's own cgroup where writable (as root). Where neither is
 * writable the mode says so and measures nothing.
 */
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { validate } from "./Bench.ts"
import { type CellId, cells, requestFor } from "./Cells.ts"
import * as Harness from "./Harness.ts"
import * as Load from "./Load.ts"
import * as ProcStats from "./ProcStats.ts"
import { sleep, startSwitchyard, switchyardBundle, upstreamApiKey } from "./Processes.ts"

interface MemoryCgroup {
  readonly version: 1 | 2
  readonly dir: string
  readonly procs: string
  /** The most memory the cgroup's processes held at once, in bytes. */
  readonly peakBytes: () => number | undefined
  /** Starts the high-water mark again from what is held now, where the version allows (v1). */
  readonly resetPeak: () => boolean
  /** How many times the kernel's OOM killer killed a process of the cgroup. */
  readonly oomKills: () => number | undefined
  readonly remove: () => void
}

const readNumber = (path: string): number | undefined => {
  try {
    const value = Number(Fs.readFileSync(path, "utf8").trim())
    return Number.isFinite(value) ? value : undefined
  } catch {
    return undefined
  }
}

const readKey = (path: string, key: string): number | undefined => {
  try {
    const line = Fs.readFileSync(path, "utf8").split("\n").find((l) => l.startsWith(`${key} `))
    return line === undefined ? undefined : Number(line.slice(key.length + 1))
  } catch {
    return undefined
  }
}

/** This process's cgroup path under a hierarchy, from /proc/self/cgroup (`memory` on v1, `""` on v2). */
const ownPath = (controller: string): string | undefined => {
  const lines = Fs.readFileSync("/proc/self/cgroup", "utf8").trim().split("\n")
  for (const line of lines) {
    const [, controllers, path] = line.split(":")
    if (controllers === undefined || path === undefined) continue
    if (controller === "" ? controllers === "" : controllers.split(",").includes(controller)) return path
  }
  return undefined
}

/**
 * Makes a memory cgroup limited to `limitBytes` (no swap), or answers why it cannot.
 */
const make = (name: string, limitBytes: number): MemoryCgroup | string => {
  const v1Root = "/sys/fs/cgroup/memory"
  if (Fs.existsSync(NodePath.join(v1Root, "memory.limit_in_bytes"))) {
    const dir = NodePath.join(v1Root, ownPath("memory") ?? "/", name)
    try {
      Fs.mkdirSync(dir, { recursive: true })
      Fs.writeFileSync(NodePath.join(dir, "memory.limit_in_bytes"), String(limitBytes))
      const swap = NodePath.join(dir, "memory.memsw.limit_in_bytes")
      if (Fs.existsSync(swap)) Fs.writeFileSync(swap, String(limitBytes))
    } catch (error) {
      return `cgroup v1 memory at ${dir} is not writable (${(error as Error).message})`
    }
    return {
      version: 1,
      dir,
      procs: NodePath.join(dir, "cgroup.procs"),
      peakBytes: () => readNumber(NodePath.join(dir, "memory.max_usage_in_bytes")),
      resetPeak: () => {
        try {
          Fs.writeFileSync(NodePath.join(dir, "memory.max_usage_in_bytes"), "0")
          return true
        } catch {
          return false
        }
      },
      oomKills: () => readKey(NodePath.join(dir, "memory.oom_control"), "oom_kill"),
      remove: () => Fs.rmdirSync(dir)
    }
  }
  const v2Root = "/sys/fs/cgroup"
  if (Fs.existsSync(NodePath.join(v2Root, "cgroup.controllers"))) {
    const dir = NodePath.join(v2Root, ownPath("") ?? "/", name)
    try {
      Fs.mkdirSync(dir, { recursive: true })
      Fs.writeFileSync(NodePath.join(dir, "memory.max"), String(limitBytes))
      Fs.writeFileSync(NodePath.join(dir, "memory.swap.max"), "0")
    } catch (error) {
      return `cgroup v2 at ${dir} is not writable (${(error as Error).message})`
    }
    return {
      version: 2,
      dir,
      procs: NodePath.join(dir, "cgroup.procs"),
      peakBytes: () => readNumber(NodePath.join(dir, "memory.peak")),
      // v2 resets `memory.peak` only for the file handle that wrote it: each cell's own peak is not read.
      resetPeak: () => false,
      oomKills: () => readKey(NodePath.join(dir, "memory.events"), "oom_kill"),
      remove: () => Fs.rmdirSync(dir)
    }
  }
  return "no memory cgroup hierarchy on this machine"
}

interface CellOutcome {
  readonly cell: CellId
  readonly ok: number
  readonly non2xx: number
  readonly statuses: Readonly<Record<number, number>>
  readonly errors: number
  readonly rps: number
  readonly alive: boolean
  /** The cgroup's high-water mark during this cell alone, where it could be reset before it (v1). */
  readonly peakMb: number | undefined
}

export interface LimitOutcome {
  readonly limitMb: number
  readonly firstStartMs: number | undefined
  readonly restartMs: number | undefined
  readonly idleRssMb: number | undefined
  readonly cells: ReadonlyArray<CellOutcome>
  readonly peakMb: number | undefined
  readonly oomKills: number | undefined
  /** What went wrong where the run could not go on (a start killed, no cgroup). */
  readonly problem?: string
}

/** The answers other than 2xx, and which statuses they were: `12 (503 × 12)`. */
const other = (result: { readonly non2xx: number; readonly statuses: Readonly<Record<number, number>> }): string => {
  const by = Object.entries(result.statuses).map(([status, n]) => `${status} × ${n}`)
  return by.length === 0 ? String(result.non2xx) : `${result.non2xx} (${by.join(", ")})`
}

const loadCells: ReadonlyArray<CellId> = ["small-c16", "large-c16", "base64-c16", "bulk2000-c4"]

/**
 * The endpoints' `max_batch_items` here, and what the fake upstream takes: OpenAI's 2,048, so that a
 * 2,000-input request is one upstream call whose whole answer the gateway holds (issue #50).
 */
const batchItems = 2048

export const run = async (options: {
  readonly limitsMb: ReadonlyArray<number>
  readonly seconds: number
  readonly idleWaitSeconds: number
  readonly workDir: string
  readonly serverMain: string | undefined
  readonly log: (line: string) => void
}): Promise<ReadonlyArray<LimitOutcome>> => {
  const outcomes: Array<LimitOutcome> = []
  for (const limitMb of options.limitsMb) {
    const cgroup = make(`switchyard-bench-${process.pid}-${limitMb}`, limitMb * 2 ** 20)
    if (typeof cgroup === "string") {
      options.log(`${limitMb} MB: ${cgroup}; nothing measured`)
      outcomes.push({ limitMb, firstStartMs: undefined, restartMs: undefined, idleRssMb: undefined, cells: [], peakMb: undefined, oomKills: undefined, problem: cgroup })
      continue
    }
    // Built before the first start is timed (it is built once, on first use).
    if (options.serverMain === undefined) switchyardBundle()
    try {
      outcomes.push(await Harness.run({ logDir: NodePath.join(options.workDir, `logs-${limitMb}`), store: "sqlite", serverUrl: undefined, upstreamMaxInputs: batchItems }, async (harness) => {
        const dataDir = NodePath.join(options.workDir, `data-${limitMb}`)
        const start = async (name: string, secrets?: { readonly managementKey: string; readonly apiKey: string }) => {
          const started = Date.now()
          const sy = await startSwitchyard({
            name,
            logDir: NodePath.join(options.workDir, `logs-${limitMb}`),
            dataDir,
            upstreamPort: harness.upstream.port,
            width: 1536,
            cgroupProcs: cgroup.procs,
            maxBatchItems: batchItems,
            ...(secrets !== undefined ? { secrets } : {}),
            ...(options.serverMain !== undefined ? { main: options.serverMain } : {})
          })
          return { sy, ms: Date.now() - started }
        }
        const outcome = (partial: Partial<LimitOutcome>): LimitOutcome => ({
          limitMb,
          firstStartMs: undefined,
          restartMs: undefined,
          idleRssMb: undefined,
          cells: [],
          peakMb: (cgroup.peakBytes() ?? Number.NaN) / 2 ** 20,
          oomKills: cgroup.oomKills(),
          ...partial
        })
        const first = await start(`switchyard-${limitMb}-first`).catch((error: Error) => error)
        if (first instanceof Error) return outcome({ problem: `first start failed: ${first.message.split("\n")[0]}` })
        options.log(`${limitMb} MB: first start answered after ${first.ms} ms`)
        await first.sy.stop()
        const again = await start(`switchyard-${limitMb}`, first.sy).catch((error: Error) => error)
        if (again instanceof Error) return outcome({ firstStartMs: first.ms, problem: `restart failed: ${again.message.split("\n")[0]}` })
        harness.children.push(again.sy)
        options.log(`${limitMb} MB: restart answered after ${again.ms} ms; idle ${options.idleWaitSeconds} s`)
        await sleep(options.idleWaitSeconds * 1000)
        const idleRssMb = ProcStats.rssBytes(again.sy.pid) / 2 ** 20
        const results: Array<CellOutcome> = []
        for (const id of loadCells) {
          const cell = cells.find((c) => c.id === id)!
          const request = requestFor(cell, "switchyard", {
            upstreamPort: harness.upstream.port,
            ports: { switchyard: again.sy.port },
            apiKeys: { switchyard: again.sy.apiKey },
            upstreamApiKey
          })
          const problem = await validate(cell, request, "bypass", batchItems).catch((error: Error) => error.message)
          if (problem !== undefined) options.log(`${limitMb} MB ${id}: the first answer: ${problem}`)
          const reset = cgroup.resetPeak()
          const result = await Load.run({ ...request, connections: cell.connections, seconds: options.seconds })
          const alive = !again.sy.exited()
          const peakMb = reset ? (cgroup.peakBytes() ?? Number.NaN) / 2 ** 20 : undefined
          results.push({ cell: id, ok: result.okTotal, non2xx: result.non2xx, statuses: result.statuses, errors: result.errors, rps: result.rps, alive, peakMb })
          options.log(`${limitMb} MB ${id}: ${result.okTotal} × 2xx, ${other(result)} other, ${result.errors} errors, ${alive ? "alive" : "KILLED"}`)
          if (!alive) break
        }
        return outcome({ firstStartMs: first.ms, restartMs: again.ms, idleRssMb, cells: results })
      }))
    } finally {
      // The processes have stopped: the cgroup is empty and can go.
      for (let i = 0; i < 50; i++) {
        try {
          cgroup.remove()
          break
        } catch {
          await sleep(100)
        }
      }
    }
  }
  return outcomes
}

const fmt = (value: number | undefined, digits = 0) => value === undefined || Number.isNaN(value) ? "–" : value.toFixed(digits)

export const markdown = (outcomes: ReadonlyArray<LimitOutcome>): ReadonlyArray<string> => [
  "| memory limit | first start, ms | restart, ms | idle RSS MB | cell | 2xx | other status | errors | req/s | alive | cell's peak MB | cgroup peak MB | OOM kills |",
  "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ...outcomes.flatMap((o) =>
    o.cells.length === 0
      ? [`| ${o.limitMb} MB | ${fmt(o.firstStartMs)} | ${fmt(o.restartMs)} | ${fmt(o.idleRssMb)} | ${o.problem ?? "–"} | | | | | | | ${fmt(o.peakMb)} | ${fmt(o.oomKills)} |`]
      : o.cells.map((c, i) =>
        i === 0
          ? `| ${o.limitMb} MB | ${fmt(o.firstStartMs)} | ${fmt(o.restartMs)} | ${fmt(o.idleRssMb)} | ${c.cell} | ${c.ok} | ${other(c)} | ${c.errors} | ${fmt(c.rps)} | ${c.alive ? "yes" : "**killed**"} | ${fmt(c.peakMb)} | ${fmt(o.peakMb)} | ${fmt(o.oomKills)} |`
          : `| | | | | ${c.cell} | ${c.ok} | ${other(c)} | ${c.errors} | ${fmt(c.rps)} | ${c.alive ? "yes" : "**killed**"} | ${fmt(c.peakMb)} | | |`
      )
  )
]
