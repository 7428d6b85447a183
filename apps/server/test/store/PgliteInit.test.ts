import { PGlite } from "@electric-sql/pglite"
import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as PgliteInit from "../../src/store/PgliteInit.ts"
import { tempDir } from "../support/TestServer.ts"

describe("PGlite data directory creation", () => {
  it("creates a missing data directory in a child process that PGlite then opens", async () => {
    const root = tempDir("pglite-init")
    // Leftover of an interrupted earlier run: must be dropped, never opened.
    Fs.mkdirSync(NodePath.join(root, "pglite.init-1-2"))
    const dataDir = NodePath.join(root, "pglite")
    await PgliteInit.ensureDataDir(dataDir)
    assert.isTrue(await PgliteInit.isDataDir(dataDir))
    assert.deepStrictEqual(Fs.readdirSync(root), ["pglite"])
    const db = new PGlite(dataDir)
    try {
      const result = await db.query<{ one: number }>("SELECT 1 AS one")
      assert.deepStrictEqual(result.rows, [{ one: 1 }])
    } finally {
      await db.close()
    }
  }, 120_000)

  it("initialises an existing empty directory and leaves a data directory as it is", async () => {
    const dataDir = NodePath.join(tempDir("pglite-init"), "pglite")
    Fs.mkdirSync(dataDir)
    await PgliteInit.ensureDataDir(dataDir)
    const version = Fs.statSync(NodePath.join(dataDir, "PG_VERSION")).mtimeMs
    await PgliteInit.ensureDataDir(dataDir)
    assert.strictEqual(Fs.statSync(NodePath.join(dataDir, "PG_VERSION")).mtimeMs, version)
  }, 120_000)

  it("refuses a non-empty directory that holds no database", async () => {
    const dataDir = NodePath.join(tempDir("pglite-init"), "pglite")
    Fs.mkdirSync(dataDir)
    Fs.writeFileSync(NodePath.join(dataDir, "notes.txt"), "mine")
    const error = await PgliteInit.ensureDataDir(dataDir).then(() => undefined, (e: unknown) => e)
    assert.instanceOf(error, Error)
    assert.match((error as Error).message, /not empty and holds no PGlite database/)
    assert.deepStrictEqual(Fs.readdirSync(dataDir), ["notes.txt"])
  })
})
