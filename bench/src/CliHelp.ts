import { execFile, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { promisify } from "node:util"
import { repoRoot } from "./Processes.ts"

/**
 * How long `switchyard --help` takes as an installed package runs it: the CLI's bundle is built
 * (its `build` script, as `pnpm --filter @switchyard/cli build` runs it), laid out as `npm i`
 * lays out the packed tarball (`package.json` and its `files`, every mtime the same, as `npm
 * pack` writes them), and `bin/switchyard.mjs --help` is run by this Node, one child at a time.
 */
const cliDir = NodePath.join(repoRoot, "apps", "cli")
const run = promisify(execFile)

interface Manifest {
  readonly bin: Readonly<Record<string, string>>
  readonly files: ReadonlyArray<string>
  readonly scripts: { readonly build: string }
}

const manifest = (): Manifest => JSON.parse(Fs.readFileSync(NodePath.join(cliDir, "package.json"), "utf8")) as Manifest

/** This Node first on PATH, so the build's `#!/usr/bin/env node` shims run on it too. */
const env = (): NodeJS.ProcessEnv => {
  const out: NodeJS.ProcessEnv = { ...process.env, PATH: `${NodePath.dirname(process.execPath)}${NodePath.delimiter}${process.env.PATH ?? ""}` }
  delete out.NODE_OPTIONS
  return out
}

/** Runs the CLI's `build` script (rolldown) in `apps/cli`, with its own `node_modules/.bin`. */
const build = async (): Promise<void> => {
  const [command, ...args] = manifest().scripts.build.trim().split(/\s+/u)
  await run(NodePath.join(cliDir, "node_modules", ".bin", command!), args, { cwd: cliDir, env: env(), maxBuffer: 16 * 1024 * 1024 })
}

/** The fixed mtime `npm pack` gives every entry of a tarball. */
const packedTime = new Date("1985-10-26T08:15:00Z")

const touchAll = (path: string) => {
  Fs.utimesSync(path, packedTime, packedTime)
  if (Fs.statSync(path).isDirectory()) for (const entry of Fs.readdirSync(path)) touchAll(NodePath.join(path, entry))
}

/**
 * The package as installed under `<dir>/node_modules/@switchyard/cli`; returns the path of its
 * `switchyard` bin.
 */
const install = (dir: string): string => {
  const pkg = manifest()
  const target = NodePath.join(dir, "node_modules", "@switchyard", "cli")
  Fs.mkdirSync(target, { recursive: true })
  for (const entry of ["package.json", ...pkg.files]) {
    Fs.cpSync(NodePath.join(cliDir, entry), NodePath.join(target, entry), { recursive: true })
  }
  touchAll(target)
  const bin = pkg.bin.switchyard
  if (bin === undefined) throw new Error("apps/cli/package.json has no switchyard bin")
  return NodePath.join(target, bin)
}

const once = (bin: string, cwd: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const started = process.hrtime.bigint()
    const child = spawn(process.execPath, [bin, "--help"], { cwd, env: env(), stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    child.once("error", reject)
    child.once("close", (code) => {
      const ms = Number(process.hrtime.bigint() - started) / 1e6
      // The help names the commands: an answer without them (an error, a stack trace) is not timed.
      if (code !== 0 || !output.includes("USAGE") || !output.includes("embed")) {
        reject(new Error(`switchyard --help exited ${code}: ${output.slice(0, 500)}`))
      } else resolve(ms)
    })
  })

/** Builds, installs into a scratch directory and times `runs` runs of `switchyard --help`, in ms. */
export const measure = async (runs: number, log: (line: string) => void): Promise<ReadonlyArray<number>> => {
  const started = Date.now()
  await build()
  log(`built the CLI bundle in ${Date.now() - started} ms`)
  const scratch = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-cli-"))
  try {
    const bin = install(scratch)
    const times: Array<number> = []
    for (let i = 0; i < runs; i++) times.push(await once(bin, scratch))
    log(`switchyard --help: ${times.map((ms) => Math.round(ms)).join(", ")} ms`)
    return times
  } finally {
    Fs.rmSync(scratch, { recursive: true, force: true })
  }
}
