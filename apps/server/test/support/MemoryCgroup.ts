import * as Fs from "node:fs"
import * as NodePath from "node:path"

/**
 * A memory cgroup of its own for a process under test (what a container's memory limit is):
 * cgroup v2 (a child of this process's cgroup, `memory.max`) or v1 (a child of the memory
 * hierarchy's root, `memory.limit_in_bytes`). Needs a writable cgroup file system (root).
 */
export interface MemoryCgroup {
  readonly path: string
  /** Moves a process (and its later children) into the cgroup. */
  readonly add: (pid: number) => void
  /** Processes the kernel killed for memory in this cgroup. */
  readonly oomKills: () => number
  /** The cgroup's high-water mark of memory use, when the kernel reports it. */
  readonly peakBytes: () => number | undefined
  readonly remove: () => void
}

const readNumber = (file: string, key?: string): number | undefined => {
  try {
    const text = Fs.readFileSync(file, "utf8")
    if (key === undefined) return Number(text.trim())
    const match = new RegExp(`^${key} (\\d+)$`, "mu").exec(text)
    return match === null ? undefined : Number(match[1])
  } catch {
    return undefined
  }
}

/** A new memory cgroup limited to `limitBytes`, or why there cannot be one here. */
export const create = (name: string, limitBytes: number): MemoryCgroup | string => {
  const v1Root = "/sys/fs/cgroup/memory"
  const unified = Fs.existsSync("/sys/fs/cgroup/cgroup.controllers")
  try {
    if (unified) {
      const own = /^0::(.*)$/mu.exec(Fs.readFileSync("/proc/self/cgroup", "utf8"))?.[1] ?? "/"
      const path = NodePath.join("/sys/fs/cgroup", own, `${name}-${process.pid}`)
      Fs.mkdirSync(path)
      Fs.writeFileSync(NodePath.join(path, "memory.max"), String(limitBytes))
      Fs.writeFileSync(NodePath.join(path, "memory.swap.max"), "0")
      return {
        path,
        add: (pid) => Fs.writeFileSync(NodePath.join(path, "cgroup.procs"), String(pid)),
        oomKills: () => readNumber(NodePath.join(path, "memory.events"), "oom_kill") ?? 0,
        peakBytes: () => readNumber(NodePath.join(path, "memory.peak")),
        remove: () => Fs.rmdirSync(path)
      }
    }
    if (!Fs.existsSync(NodePath.join(v1Root, "memory.limit_in_bytes"))) return "no cgroup v1 memory hierarchy at /sys/fs/cgroup/memory and no cgroup v2"
    const path = NodePath.join(v1Root, `${name}-${process.pid}`)
    Fs.mkdirSync(path)
    Fs.writeFileSync(NodePath.join(path, "memory.limit_in_bytes"), String(limitBytes))
    return {
      path,
      add: (pid) => Fs.writeFileSync(NodePath.join(path, "cgroup.procs"), String(pid)),
      oomKills: () => readNumber(NodePath.join(path, "memory.oom_control"), "oom_kill") ?? 0,
      peakBytes: () => readNumber(NodePath.join(path, "memory.max_usage_in_bytes")),
      remove: () => Fs.rmdirSync(path)
    }
  } catch (error) {
    return `cannot make a memory cgroup here (${(error as Error).message})`
  }
}
