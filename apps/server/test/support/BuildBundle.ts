import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")

/**
 * What the start command builds before it runs the server: the root package.json's `start` up to
 * its first `&&` (turbo: the production bundle `dist/main.mjs` and the web console it serves at
 * `/ui/`). Run here as written, so the production tests run what `npx -y pnpm@10 start` runs.
 */
export const startBuild = (): string => {
  const start = (JSON.parse(Fs.readFileSync(NodePath.join(root, "package.json"), "utf8")) as { scripts: { start: string } }).scripts.start
  return start.split(" && ")[0]!
}

/**
 * turbo runs each package's script with pnpm, which `npx -y pnpm@10 test` puts on PATH; a file run
 * alone (`npx vitest run ...`) may have none, and gets the README's `npx -y pnpm@10` on it.
 */
export const pnpmOnPath = (path: string): string => {
  const env = { ...process.env, PATH: path }
  if (ChildProcess.spawnSync("sh", ["-c", "command -v pnpm"], { env }).status === 0) return path
  const found = ChildProcess.execFileSync("npx", ["-y", "-p", "pnpm@10", "sh", "-c", "command -v pnpm"], { env, encoding: "utf8" }).trim()
  return `${NodePath.dirname(found)}${NodePath.delimiter}${path}`
}

/** PATH as `npx -y pnpm@10 <script>` sets it up at the repository's root. */
export const scriptPath = () => pnpmOnPath(`${NodePath.join(root, "node_modules", ".bin")}${NodePath.delimiter}${process.env.PATH ?? ""}`)

/** Vitest global setup: builds what the start command builds (turbo replays it when nothing changed). */
export default function setup() {
  const path = scriptPath()
  // Quiet unless it fails: turbo's summary would stand between the test lines.
  const build = ChildProcess.spawnSync("sh", ["-c", startBuild()], { cwd: root, encoding: "utf8", env: { ...process.env, PATH: path } })
  if (build.status !== 0) throw new Error(`the start command's build failed:\n${build.stdout}${build.stderr}`)
}
