// Prints what each package's last `vitest run` counted (its JSON report), one line per package, so
// that the end of `pnpm test` says how many tests ran, passed, failed and were skipped where; then
// each failed test (or test file that failed to run) with the first lines of its error, so that
// the last lines of the run say what failed (the full reports are above, in each package's output).
import * as Fs from "node:fs"
import * as NodePath from "node:path"

const root = NodePath.resolve(import.meta.dirname, "..")
const dirs = ["packages/core", "packages/client", "apps/server", "apps/cli", "bench"]
const since = Number(process.argv[2] ?? 0)

const rows = []
const failures = []
const firstLines = (text) => String(text).replace(/\x1b\[[0-9;]*m/gu, "").split("\n").map((l) => l.trimEnd()).filter((l) => l.trim() !== "").slice(0, 3)
for (const dir of dirs) {
  const name = JSON.parse(Fs.readFileSync(NodePath.join(root, dir, "package.json"), "utf8")).name
  const file = NodePath.join(root, dir, "node_modules", ".vitest", "results.json")
  if (!Fs.existsSync(file) || Fs.statSync(file).mtimeMs < since) {
    rows.push([name, "-", "-", "-", "-", "no results from this run"])
    continue
  }
  const report = JSON.parse(Fs.readFileSync(file, "utf8"))
  const skipped = report.numPendingTests + report.numTodoTests
  rows.push([name, report.numTotalTests, report.numPassedTests, report.numFailedTests, skipped, report.success ? "ok" : "FAILED"])
  for (const file of report.testResults ?? []) {
    const where = NodePath.relative(root, file.name)
    const failed = (file.assertionResults ?? []).filter((t) => t.status === "failed")
    for (const test of failed) failures.push([`${where} › ${test.fullName ?? test.title}`, ...firstLines((test.failureMessages ?? []).join("\n"))])
    if (failed.length === 0 && file.status === "failed") failures.push([where, ...firstLines(file.message || "the file failed to run")])
  }
}
const header = ["package", "tests", "passed", "failed", "skipped", ""]
const widths = header.map((h, i) => Math.max(String(h).length, ...rows.map((r) => String(r[i]).length)))
const line = (r) => r.map((c, i) => (i === 0 || i === r.length - 1 ? String(c).padEnd(widths[i]) : String(c).padStart(widths[i]))).join("  ").trimEnd()
process.stdout.write(`\n${line(header)}\n${rows.map(line).join("\n")}\n`)
if (failures.length > 0) {
  process.stdout.write(`\n${failures.length} failed:\n${failures.map(([title, ...detail]) => [`  ✗ ${title}`, ...detail.map((l) => `      ${l}`)].join("\n")).join("\n")}\n`)
}
