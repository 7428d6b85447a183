import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"

/**
 * Global setup of every test project: one scratch directory for the run, which the system's
 * temporary directory (`TMPDIR`, what `os.tmpdir()` reads) points into for the workers and every
 * process they start. Each test file gets a directory of its own there, removed when the file is
 * done (`vitest.scratch-file.ts`). At the end of the run the scratch directory must be empty: what
 * is left (a data directory, a config file of a test whose clean-up did not run) is listed and the
 * run fails, then it is removed anyway.
 */
export default function setup() {
  const previous = process.env.TMPDIR
  const root = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-test-run-"))
  process.env.SWITCHYARD_TEST_SCRATCH = root
  process.env.TMPDIR = root
  return () => {
    if (previous === undefined) delete process.env.TMPDIR
    else process.env.TMPDIR = previous
    // Node's own compile cache (`module.enableCompileCache`, used by the tools) is not the tests';
    // an empty file directory is a file that made nothing (all its tests skipped: its hooks, the
    // clean-up included, did not run).
    const entries = Fs.existsSync(root) ? Fs.readdirSync(root).filter((name) => name !== "node-compile-cache") : []
    const left = entries.flatMap((name) => {
      const path = NodePath.join(root, name)
      if (!name.startsWith("file-") || !Fs.statSync(path).isDirectory()) return [name]
      return Fs.readdirSync(path).map((inner) => `${name}/${inner}`)
    })
    Fs.rmSync(root, { recursive: true, force: true })
    if (left.length > 0) {
      throw new Error(`the tests left ${left.length} entries in their scratch directory (removed now): ${left.join(", ")}`)
    }
  }
}
