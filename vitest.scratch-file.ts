import { afterAll } from "vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

// Each test file's temporary files and data directories go in a directory of its own, removed
// once the file's own clean-up (its `afterAll` hooks, which run first) is done: a test server's
// 40 MB store never outlives its file, whether or not the test removed it.
const root = process.env.SWITCHYARD_TEST_SCRATCH
if (root !== undefined && Fs.existsSync(root)) {
  const dir = Fs.mkdtempSync(NodePath.join(root, "file-"))
  const previous = process.env.TMPDIR
  process.env.TMPDIR = dir
  afterAll(() => {
    process.env.TMPDIR = previous
    Fs.rmSync(dir, { recursive: true, force: true, maxRetries: 3 })
  })
}
