import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { level, readFigures, runDirVariable } from "./Reliability.ts"

export const summaryFile = NodePath.join(Os.tmpdir(), "switchyard-reliability-summary.json")

/**
 * Vitest global setup: gives the run a directory for the suites' figures, and at the end prints
 * their sum and writes it to `<tmp>/switchyard-reliability-summary.json`. Prints nothing when no
 * reliability suite ran.
 */
export default function setup() {
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-reliability-run-"))
  process.env[runDirVariable] = dir
  return () => {
    const { suites, total } = readFigures(dir)
    Fs.rmSync(dir, { recursive: true, force: true })
    if (Object.keys(suites).length === 0) return
    const summary = { level, finished_at: new Date().toISOString(), ...total, suites }
    Fs.writeFileSync(summaryFile, `${JSON.stringify(summary, null, 2)}\n`)
    process.stdout.write(
      `\nReliability (${level}): faults injected ${total.faultsInjected}, crashes survived ${total.crashesSurvived}, ` +
        `inputs tried ${total.inputsTried}, leaks found ${total.leaksFound} (${total.requests} requests; ${summaryFile})\n`
    )
  }
}
