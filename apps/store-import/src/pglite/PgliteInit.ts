import * as ChildProcess from "node:child_process"
import { createRequire } from "node:module"
import * as Fs from "node:fs/promises"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"

/**
 * Creating a PGlite data directory (`initdb`) runs a second Postgres and the initdb program inside
 * the process and peaks at about 1 GB; WebAssembly memory and the allocator's arenas are not given
 * back afterwards, so a gateway that ran it kept some 130-400 MB more resident memory for good.
 * Here it runs in a short-lived child Node process instead, whose memory the system takes back
 * when it exits; the server then opens the finished directory like any existing one.
 */

/** The child's program: initialise the directory given, then close it cleanly. */
const initScript = `
const [moduleUrl, dataDir] = process.argv.slice(1)
const { PGlite } = await import(moduleUrl)
const db = new PGlite(dataDir)
await db.waitReady
await db.close()
`

/** PGlite's entry point as this process resolves it, so the child loads the very same build. */
const pgliteModuleUrl = () => NodeUrl.pathToFileURL(createRequire(import.meta.url).resolve("@electric-sql/pglite")).href

const exists = (path: string) => Fs.access(path).then(() => true, () => false)

/** Whether a directory holds a PGlite (PostgreSQL) data directory. */
const isDataDir = (dataDir: string): Promise<boolean> => exists(NodePath.join(dataDir, "PG_VERSION"))

/** Runs initdb for `dataDir` (which must not exist yet) in a child Node process. */
const initInChild = (dataDir: string): Promise<void> =>
  new Promise((resolve, reject) => {
    const child = ChildProcess.spawn(
      process.execPath,
      ["--input-type=module", "-e", initScript, pgliteModuleUrl(), dataDir],
      { stdio: ["ignore", "ignore", "pipe"], env: process.env }
    )
    let stderr = ""
    child.stderr.setEncoding("utf8")
    child.stderr.on("data", (chunk: string) => {
      if (stderr.length < 8192) stderr += chunk
    })
    child.once("error", reject)
    child.once("exit", (code, signal) => {
      if (code === 0) resolve()
      else reject(new Error(`PGlite initdb failed (${signal ?? `exit code ${code}`}): ${stderr.trim()}`))
    })
  })

/**
 * Makes sure `dataDir` is a PGlite data directory, creating it when missing. A new directory is
 * initialised under a temporary sibling name and renamed into place only once initdb has finished,
 * so a crash part-way never leaves a half-made database where the server would open it. An existing
 * non-empty directory that is not a data directory is refused rather than written over.
 */
export const ensureDataDir = async (dataDir: string): Promise<void> => {
  if (await isDataDir(dataDir)) return
  const entries = await Fs.readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return undefined
    throw error
  })
  if (entries !== undefined && entries.length > 0) {
    throw new Error(`${dataDir} is not empty and holds no PGlite database (no PG_VERSION); refusing to initialise it`)
  }
  const parent = NodePath.dirname(dataDir)
  const scratchPrefix = `${NodePath.basename(dataDir)}.init-`
  await Fs.mkdir(parent, { recursive: true })
  // Leftovers of an initdb that a crash interrupted: never opened, safe to drop.
  for (const name of await Fs.readdir(parent)) {
    if (name.startsWith(scratchPrefix)) await Fs.rm(NodePath.join(parent, name), { recursive: true, force: true })
  }
  const scratch = NodePath.join(parent, `${scratchPrefix}${process.pid}-${Date.now()}`)
  try {
    await initInChild(scratch)
    if (entries !== undefined) await Fs.rmdir(dataDir)
    await Fs.rename(scratch, dataDir)
  } finally {
    await Fs.rm(scratch, { recursive: true, force: true })
  }
}
