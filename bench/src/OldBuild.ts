import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { repoRoot, startEnvOf, startFlagsOf } from "./Processes.ts"

/**
 * An earlier commit's server as a further target (`--old-server REF`): that commit checked out in a
 * temporary detached git worktree, its packages installed from the local pnpm store where it has
 * them (online otherwise), its production bundle built with its own rolldown config, and run with
 * the Node flags of its own `start` script, as `pnpm start` ran it then. The worktree is removed
 * when the benchmark ends.
 */
export interface OldBuild {
  /** The ref as given. */
  readonly ref: string
  /** The commit it names. */
  readonly commit: string
  /** That build's `dist/main.mjs`. */
  readonly main: string
  /** The Node flags of that build's start script. */
  readonly startFlags: ReadonlyArray<string>
  /** The environment its start script sets before `node`. */
  readonly startEnv: Readonly<Record<string, string>>
  /** Removes the worktree. */
  readonly remove: () => void
}

const run = (command: string, args: ReadonlyArray<string>, cwd: string) =>
  spawnSync(command, args, { cwd, encoding: "utf8", maxBuffer: 64 * 2 ** 20, env: { ...process.env, CI: "true" } })

const output = (r: ReturnType<typeof run>) => `${r.stdout ?? ""}${r.stderr ?? ""}${r.error !== undefined ? String(r.error) : ""}`.trim()

const git = (args: ReadonlyArray<string>) => {
  const r = run("git", args, repoRoot)
  if (r.status !== 0) throw new Error(`git ${args.join(" ")} failed: ${output(r)}`)
  return r.stdout.trim()
}

/** The commit `ref` names in this repository, or an error that says it names none. */
export const resolveRef = (ref: string): string => {
  const r = run("git", ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`], repoRoot)
  if (r.status !== 0) throw new Error(`--old-server: ${JSON.stringify(ref)} names no commit of this repository`)
  return r.stdout.trim()
}

/** Checks out, installs and builds the server of `ref`; the caller removes it (`remove`). */
export const prepare = (ref: string, log: (line: string) => void): OldBuild => {
  const commit = resolveRef(ref)
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-old-build-"))
  git(["worktree", "add", "--detach", dir, commit])
  const remove = () => {
    const removed = run("git", ["worktree", "remove", "--force", dir], repoRoot)
    if (removed.status !== 0) run("git", ["worktree", "prune"], repoRoot)
    Fs.rmSync(dir, { recursive: true, force: true })
  }
  try {
    log(`old build: ${ref} (${commit.slice(0, 12)}) checked out; installing its packages`)
    // Only the server and the workspace packages it depends on.
    const install = (offline: boolean) =>
      run("npx", ["-y", "pnpm@10", "install", "--frozen-lockfile", "--filter", "@switchyard/server...", ...(offline ? ["--offline"] : [])], dir)
    let installed = install(true)
    if (installed.status !== 0) {
      log("old build: the local pnpm store lacks some of its packages; installing online")
      installed = install(false)
    }
    if (installed.status !== 0) throw new Error(`installing the packages of ${ref} failed: ${output(installed)}`)
    const serverDir = NodePath.join(dir, "apps", "server")
    const rolldown = NodePath.join(serverDir, "node_modules", "rolldown", "bin", "cli.mjs")
    const built = run(process.execPath, [rolldown, "-c", "rolldown.config.ts"], serverDir)
    const main = NodePath.join(serverDir, "dist", "main.mjs")
    if (built.status !== 0 || !Fs.existsSync(main)) throw new Error(`building the server of ${ref} failed: ${output(built)}`)
    const startFlags = startFlagsOf(serverDir)
    log(`old build: ${main} built; its start flags: ${startFlags.join(" ") || "(none)"}`)
    return { ref, commit, main, startFlags, startEnv: startEnvOf(serverDir), remove }
  } catch (error) {
    remove()
    throw error
  }
}
