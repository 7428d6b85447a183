/**
 * `pnpm store:import-pglite --data-dir DIR` (from the repository's root): copies the PGlite store of
 * an earlier Switchyard in DIR into the SQLite store the gateway now opens there (ImportPglite.ts).
 * A relative DIR is taken from the directory the command was run in. Exit code 1 and one line on
 * standard error when it cannot.
 */
import * as NodePath from "node:path"
import { parseArgs } from "node:util"
import { importPglite } from "./ImportPglite.ts"

const { values } = parseArgs({ options: { "data-dir": { type: "string" } } })
const given = values["data-dir"] ?? process.env.SWITCHYARD_DATA_DIR ?? ".switchyard"
const dataDir = NodePath.resolve(process.env.INIT_CWD ?? process.cwd(), given)

try {
  const imported = await importPglite(dataDir, (line) => console.log(`  ${line}`))
  console.log(`copied into ${imported.file}; counts and sums agree. Start the gateway; remove ${NodePath.join(dataDir, "pglite")} once it runs.`)
} catch (error) {
  process.stderr.write(`switchyard: cannot import the PGlite store of ${dataDir}: ${error instanceof Error ? error.message : String(error)}\n`)
  process.exit(1)
}
