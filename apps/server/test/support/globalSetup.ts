import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as PgliteInit from "../../src/store/PgliteInit.ts"

/**
 * Initialises one empty PGlite directory for the whole run; test servers copy it instead of
 * running `initdb` (seconds) in every test file. It is made the way the server makes one (initdb in
 * a child process), which also keeps initdb's memory out of the test runner.
 */
export default async function setup() {
  const root = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-template-"))
  const dir = NodePath.join(root, "pglite")
  await PgliteInit.ensureDataDir(dir)
  process.env.SWITCHYARD_TEST_PGLITE_TEMPLATE = dir
  // Required with DATABASE_URL (replicas share it); the test servers and processes inherit it.
  process.env.SWITCHYARD_SECRET_KEY ??= Crypto.randomBytes(32).toString("base64")
  return () => Fs.rmSync(root, { recursive: true, force: true })
}
