import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"
import { promisify } from "node:util"

/**
 * The peer gateway (`@portkey-ai/gateway`) is not a dependency of the workspace: installing the
 * gateway must not install a second gateway. `bench/peer` is its own small npm project (pinned
 * versions, its lockfile, the `@hono/node-server` override Portkey needs); the bench installs it
 * there with `npm ci` the first time it starts the peer.
 */
const peerDir = NodePath.resolve(NodePath.dirname(fileURLToPath(import.meta.url)), "..", "peer")

/** The peer's server entry, once installed. */
const entry = NodePath.join(peerDir, "node_modules", "@portkey-ai", "gateway", "build", "start-server.js")

/** Installs the peer gateway unless it is there already; resolves with its entry. */
export const ensure = async (): Promise<string> => {
  if (Fs.existsSync(entry)) return entry
  process.stderr.write(`Installing the peer gateway into ${peerDir} (once)\n`)
  await promisify(execFile)("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error", "--legacy-peer-deps"], {
    cwd: peerDir,
    maxBuffer: 16 * 1024 * 1024
  })
  if (!Fs.existsSync(entry)) throw new Error(`npm ci in ${peerDir} did not install ${entry}`)
  return entry
}
