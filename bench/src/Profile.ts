import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

/**
 * Self time per function from a V8 `.cpuprofile` (what `node --cpu-prof` writes), and per module.
 */
export interface ProfileNode {
  readonly id: number
  readonly callFrame: {
    readonly functionName: string
    readonly url: string
    readonly lineNumber: number
  }
  /** The ids of the functions this one called (V8 writes them; the call tree's edges). */
  readonly children?: ReadonlyArray<number>
}

export interface CpuProfile {
  readonly startTime: number
  readonly endTime: number
  readonly nodes: ReadonlyArray<ProfileNode>
  readonly samples: ReadonlyArray<number>
  readonly timeDeltas: ReadonlyArray<number>
}

interface Row {
  readonly name: string
  readonly location: string
  readonly selfMs: number
  readonly share: number
}

export interface Analysis {
  readonly totalMs: number
  readonly busyMs: number
  readonly functions: ReadonlyArray<Row>
  readonly modules: ReadonlyArray<Row>
}

const special = new Set(["(idle)", "(program)", "(garbage collector)", "(root)"])

/** Where a function lives, without this machine's paths: the package path or the repository path. */
export const shortPath = (url: string, repoRoot: string): string => {
  if (url === "") return ""
  let path = url
  if (url.startsWith("file://")) {
    try {
      path = fileURLToPath(url)
    } catch {
      path = url
    }
  }
  const modules = path.lastIndexOf("node_modules/")
  if (modules >= 0) return path.slice(modules + "node_modules/".length)
  if (NodePath.isAbsolute(path)) return NodePath.relative(repoRoot, path)
  return path
}

const moduleOf = (location: string): string => {
  if (location === "") return "(native / V8)"
  if (location.startsWith("node:")) return "node (built-in)"
  const parts = location.split("/")
  if (parts[0]!.startsWith("@")) return `${parts[0]}/${parts[1]}`
  if (parts[0] === "apps" || parts[0] === "packages") return parts.slice(0, 4).join("/").replace(/:\d+$/u, "")
  return parts[0]!
}

/**
 * `window` (microseconds on the monotonic clock, which V8's sample times and `process.hrtime` share
 * on Linux) keeps only the samples taken while the load ran, not start-up.
 */
export const analyse = (
  profile: CpuProfile,
  repoRoot: string,
  options: { readonly top?: number; readonly window?: { readonly fromUs: number; readonly toUs: number } } = {}
): Analysis => {
  const top = options.top ?? 25
  const byId = new Map(profile.nodes.map((n) => [n.id, n]))
  const selfUs = new Map<number, number>()
  let at = profile.startTime
  for (let i = 0; i < profile.samples.length; i++) {
    const delta = profile.timeDeltas[i] ?? 0
    at += delta
    if (options.window !== undefined && (at < options.window.fromUs || at > options.window.toUs)) continue
    const id = profile.samples[i]!
    selfUs.set(id, (selfUs.get(id) ?? 0) + delta)
  }
  const functions = new Map<string, { name: string; location: string; us: number }>()
  const modules = new Map<string, number>()
  let totalUs = 0
  let idleUs = 0
  for (const [id, us] of selfUs) {
    const node = byId.get(id)
    if (node === undefined) continue
    totalUs += us
    const name = node.callFrame.functionName === "" ? "(anonymous)" : node.callFrame.functionName
    if (name === "(idle)") {
      idleUs += us
      continue
    }
    const path = shortPath(node.callFrame.url, repoRoot)
    const location = path === "" ? "" : `${path}:${node.callFrame.lineNumber + 1}`
    const key = `${name}|${location}`
    const entry = functions.get(key) ?? { name, location, us: 0 }
    entry.us += us
    functions.set(key, entry)
    const module = special.has(name) ? name : moduleOf(path)
    modules.set(module, (modules.get(module) ?? 0) + us)
  }
  const busyUs = totalUs - idleUs
  const row = (name: string, location: string, us: number): Row => ({
    name,
    location,
    selfMs: us / 1000,
    share: busyUs === 0 ? 0 : us / busyUs
  })
  return {
    totalMs: totalUs / 1000,
    busyMs: busyUs / 1000,
    functions: [...functions.values()].sort((a, b) => b.us - a.us).slice(0, top).map((f) => row(f.name, f.location, f.us)),
    modules: [...modules.entries()].sort((a, b) => b[1] - a[1]).slice(0, top).map(([name, us]) => row(name, "", us))
  }
}

export const read = (path: string): CpuProfile => JSON.parse(Fs.readFileSync(path, "utf8")) as CpuProfile

export const markdown = (analysis: Analysis, heading: string): string =>
  [
    `## ${heading}`,
    "",
    `${analysis.busyMs.toFixed(0)} ms of CPU on the main thread in ${analysis.totalMs.toFixed(0)} ms profiled (the rest idle).`,
    "",
    "### Top functions by self time",
    "",
    "| self ms | share | function | where |",
    "|---|---|---|---|",
    ...analysis.functions.map((r) => `| ${r.selfMs.toFixed(1)} | ${(r.share * 100).toFixed(1)} % | \`${r.name}\` | ${r.location} |`),
    "",
    "### Self time by module",
    "",
    "| self ms | share | module |",
    "|---|---|---|",
    ...analysis.modules.map((r) => `| ${r.selfMs.toFixed(1)} | ${(r.share * 100).toFixed(1)} % | ${r.name} |`)
  ].join("\n")
