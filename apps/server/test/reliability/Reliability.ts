import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"

// `SWITCHYARD_RELIABILITY=full` is `pnpm test:reliability`; anything else is the quick set that
// `pnpm test` and CI run.
export type Level = "quick" | "full"

export const level: Level = process.env.SWITCHYARD_RELIABILITY === "full" ? "full" : "quick"

export interface Size {
  /** fast-check runs per endpoint and input kind (bodies, headers, query strings, paths). */
  readonly hostileRuns: number
  /** Requests with random upstream faults. */
  readonly faultRuns: number
  /** kill -9 rounds under load. */
  readonly crashRounds: number
  readonly soakMs: number
  readonly soakRatePerSecond: number
}

export const size: Size = level === "full"
  ? { hostileRuns: 1500, faultRuns: 400, crashRounds: 4, soakMs: 10 * 60_000, soakRatePerSecond: 40 }
  : { hostileRuns: 40, faultRuns: 40, crashRounds: 1, soakMs: 20_000, soakRatePerSecond: 25 }

export interface Figures {
  readonly faultsInjected: number
  readonly crashesSurvived: number
  readonly inputsTried: number
  readonly leaksFound: number
  readonly requests: number
}

const emptyFigures: Figures = { faultsInjected: 0, crashesSurvived: 0, inputsTried: 0, leaksFound: 0, requests: 0 }

export const runDirVariable = "SWITCHYARD_RELIABILITY_RUN_DIR"

let fallbackDir: string | undefined

// The summary's global setup names the directory; a file run without it still records somewhere.
const runDir = (): string => {
  if (process.env[runDirVariable] === undefined && fallbackDir === undefined) {
    fallbackDir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-reliability-"))
  }
  const dir = process.env[runDirVariable] ?? fallbackDir!
  Fs.mkdirSync(dir, { recursive: true })
  return dir
}

/**
 * Adds to the run's figures: one small file per call, summed by the summary at the end of the run.
 */
export const record = (suite: string, figures: Partial<Figures>): void => {
  const file = NodePath.join(runDir(), `${suite}-${process.pid}-${Crypto.randomUUID()}.json`)
  Fs.writeFileSync(file, JSON.stringify({ suite, ...figures }))
}

export const readFigures = (dir: string): { readonly total: Figures; readonly suites: Record<string, Figures> } => {
  const suites: Record<string, Figures> = {}
  let total = emptyFigures
  const add = (a: Figures, b: Partial<Figures>): Figures => ({
    faultsInjected: a.faultsInjected + (b.faultsInjected ?? 0),
    crashesSurvived: a.crashesSurvived + (b.crashesSurvived ?? 0),
    inputsTried: a.inputsTried + (b.inputsTried ?? 0),
    leaksFound: a.leaksFound + (b.leaksFound ?? 0),
    requests: a.requests + (b.requests ?? 0)
  })
  if (!Fs.existsSync(dir)) return { total, suites }
  for (const name of Fs.readdirSync(dir).filter((n) => n.endsWith(".json"))) {
    const entry = JSON.parse(Fs.readFileSync(NodePath.join(dir, name), "utf8")) as Partial<Figures> & { readonly suite: string }
    suites[entry.suite] = add(suites[entry.suite] ?? emptyFigures, entry)
    total = add(total, entry)
  }
  return { total, suites }
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

/** Every substring of `length` characters: a secret leaks if any long-enough piece of it shows up. */
const windows = (secret: string, length = 16, step = 1): ReadonlyArray<string> => {
  if (secret.length <= length) return [secret]
  const starts = Array.from({ length: Math.floor((secret.length - length) / step) + 1 }, (_, i) => i * step)
  if (starts.at(-1) !== secret.length - length) starts.push(secret.length - length)
  return starts.map((i) => secret.slice(i, i + length))
}

/**
 * The names of the secrets that show up in `haystack`, whole or as any 16-character piece (with
 * `step` 8, any piece of 24 or more characters).
 */
export const findLeaks = (haystack: string, secrets: Readonly<Record<string, string>>, step = 1): ReadonlyArray<string> => {
  const found: Array<string> = []
  for (const [name, secret] of Object.entries(secrets)) {
    if (windows(secret, 16, step).some((piece) => haystack.includes(piece))) found.push(name)
  }
  return found
}
