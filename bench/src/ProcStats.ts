import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"

/**
 * CPU time and memory of one process, read from Linux's /proc (every thread of the process
 * counts: V8's compiler and GC threads as well as the event loop).
 */
let ticksPerSecond: number | undefined

const clockTicks = (): number => {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100
    } catch {
      ticksPerSecond = 100
    }
  }
  return ticksPerSecond
}

/** User plus system CPU time the process has used so far, in milliseconds. */
export const cpuMillis = (pid: number): number => cpuOf(`/proc/${pid}/stat`)

/** The ids of the processes whose parent is `pid`. */
const childrenOf = (pid: number): Array<number> =>
  Fs.readdirSync("/proc").filter((name) => /^\d+$/u.test(name)).flatMap((name) => {
    try {
      const stat = Fs.readFileSync(`/proc/${name}/stat`, "utf8")
      return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]) === pid ? [Number(name)] : []
    } catch {
      return []
    }
  })

/**
 * The CPU time of the process and its children (`SWITCHYARD_WORKERS`: the primary and its
 * workers), in milliseconds. A child that exited since is not counted.
 */
export const treeCpuMillis = (pid: number): number =>
  childrenOf(pid).reduce((n, child) => {
    try {
      return n + cpuMillis(child)
    } catch {
      return n
    }
  }, cpuMillis(pid))

/** The resident set size of the process and its children, summed. */
export const treeRssBytes = (pid: number): number =>
  childrenOf(pid).reduce((n, child) => {
    try {
      return n + rssBytes(child)
    } catch {
      return n
    }
  }, rssBytes(pid))

/** The same for one thread of the process (its main thread: `tid` = `pid`). */
export const threadCpuMillis = (pid: number, tid: number): number => cpuOf(`/proc/${pid}/task/${tid}/stat`)

const cpuOf = (path: string): number => {
  const stat = Fs.readFileSync(path, "utf8")
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
  const utime = Number(fields[11])
  const stime = Number(fields[12])
  return ((utime + stime) * 1000) / clockTicks()
}

const statusField = (pid: number, name: string): number | undefined => {
  const status = Fs.readFileSync(`/proc/${pid}/status`, "utf8")
  const match = new RegExp(`^${name}:\\s+(\\d+) kB`, "mu").exec(status)
  return match === null ? undefined : Number(match[1]) * 1024
}

export const rssBytes = (pid: number): number => statusField(pid, "VmRSS") ?? 0

/** The highest resident set size since the process started or since `resetPeak`. */
export const peakRssBytes = (pid: number): number => statusField(pid, "VmHWM") ?? 0

/**
 * Restarts the kernel's peak-RSS count of the process, so that a peak can be read per cell.
 * False where the kernel or the permissions do not allow it (the peak is then the lifetime one).
 */
export const resetPeak = (pid: number): boolean => {
  try {
    Fs.writeFileSync(`/proc/${pid}/clear_refs`, "5")
    return true
  } catch {
    return false
  }
}

export const available = (): boolean => Fs.existsSync(`/proc/${process.pid}/stat`)
