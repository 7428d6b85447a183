import { PGlite } from "@electric-sql/pglite"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"

/**
 * Initialises one empty PGlite directory for the whole run; test servers copy it instead of
 * running `initdb` (seconds) in every test file.
 */
export default async function setup() {
  const root = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-template-"))
  const dir = NodePath.join(root, "pglite")
  const db = new PGlite(dir)
  await db.waitReady
  await db.close()
  process.env.SWITCHYARD_TEST_PGLITE_TEMPLATE = dir
  return () => Fs.rmSync(root, { recursive: true, force: true })
}
