import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { fileURLToPath } from "node:url"

const binPath = fileURLToPath(new URL("../../bin/switchyard.mjs", import.meta.url))

export interface Ran {
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

const baseEnv = () => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) {
    // A user's shell, not CI's: Node turns colours off whenever `CI` is set.
    if (value !== undefined && !key.startsWith("SWITCHYARD_") && !["NO_COLOR", "FORCE_COLOR", "CI"].includes(key)) env[key] = value
  }
  return env
}

/**
 * Runs the `switchyard` binary as a child process with pipes (no terminal).
 */
export const runCli = (
  args: ReadonlyArray<string>,
  options: { readonly env?: Record<string, string>; readonly input?: string; readonly cwd?: string; readonly timeoutMs?: number } = {}
): Promise<Ran> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [binPath, ...args], {
      env: { ...baseEnv(), ...options.env },
      cwd: options.cwd ?? Os.tmpdir(),
      stdio: ["pipe", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString()))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000)
    child.on("error", reject)
    child.on("close", (code, signal) => {
      clearTimeout(timer)
      resolve({ code, signal, stdout, stderr })
    })
    child.stdin.end(options.input ?? "")
  })

const shellQuote = (s: string) => `'${s.replace(/'/gu, `'\\''`)}'`

/**
 * Runs the binary in a pseudo-terminal (util-linux `script`), so stdout and stderr are TTYs.
 * `onOutput` sees everything printed so far and may return a string to type (such as "\x03"
 * for Ctrl-C).
 */
export const runInTerminal = (
  args: ReadonlyArray<string>,
  options: {
    readonly env?: Record<string, string>
    readonly cwd?: string
    readonly timeoutMs?: number
    readonly onOutput?: (output: string) => string | undefined
  } = {}
): Promise<{ readonly code: number | null; readonly output: string }> =>
  new Promise((resolve, reject) => {
    const command = [process.execPath, binPath, ...args].map(shellQuote).join(" ")
    const child = spawn("script", ["-qfec", command, "/dev/null"], {
      env: { ...baseEnv(), TERM: "xterm-256color", COLUMNS: "120", LINES: "40", ...options.env },
      cwd: options.cwd ?? Os.tmpdir(),
      stdio: ["pipe", "pipe", "pipe"]
    })
    let output = ""
    const onData = (d: Buffer) => {
      output += d.toString()
      const typed = options.onOutput?.(output)
      if (typed !== undefined) child.stdin.write(typed)
    }
    child.stdout.on("data", onData)
    child.stderr.on("data", onData)
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 120_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, output })
    })
  })

export const tempDir = (prefix: string) => Fs.mkdtempSync(NodePath.join(Os.tmpdir(), `switchyard-cli-${prefix}-`))

// biome-ignore lint/suspicious/noControlCharactersInRegex: the ESC of ANSI sequences
export const stripAnsi = (text: string) => text.replace(/\u001b\[[0-9;?]*[A-Za-z]/gu, "")
