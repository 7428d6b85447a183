import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
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
 * alone (`npx vitest run ...`) may have none, and gets the README's `npx -y pnpm@10` under that name.
 */
const pnpmOnPath = (path: string): string => {
  if (ChildProcess.spawnSync("sh", ["-c", "command -v pnpm"], { env: { ...process.env, PATH: path } }).status === 0) return path
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-pnpm-"))
  Fs.writeFileSync(NodePath.join(dir, "pnpm"), "#!/bin/sh\nexec npx -y pnpm@10 \"$@\"\n", { mode: 0o755 })
  return `${dir}${NodePath.delimiter}${path}`
}

/** Vitest global setup: builds what the start command builds (turbo replays it when nothing changed). */
export default function setup() {
  const path = pnpmOnPath(`${NodePath.join(root, "node_modules", ".bin")}${NodePath.delimiter}${process.env.PATH ?? ""}`)
  ChildProcess.execSync(startBuild(), { cwd: root, stdio: ["ignore", "inherit", "inherit"], env: { ...process.env, PATH: path } })
}
