import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as NodeVersion from "../../src/NodeVersion.ts"
import { dataDirWithStore } from "../reliability/GatewayProcess.ts"
import { healthy, launch, productionCommand } from "../support/BundleProcess.ts"
import { scriptPath, startBuild } from "../support/BuildBundle.ts"
import { freePort } from "../support/ServerProcess.ts"

const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const packageJson = (dir: string) => JSON.parse(Fs.readFileSync(NodePath.join(root, dir, "package.json"), "utf8"))

describe("the start command (root package.json `start`)", () => {
  it("builds the web console with the server, and the server it starts serves it at /ui/", async () => {
    // The global setup ran the start command's build step as written (BuildBundle.ts).
    assert.include(startBuild(), "turbo run build")
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const env = { SWITCHYARD_PORT: String(port), SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_DATA_DIR: dataDirWithStore(), DATABASE_URL: "", SWITCHYARD_LOG_FORMAT: "json" }
    // As the start script runs it: the console from its default place beside the bundle.
    delete process.env.SWITCHYARD_CONSOLE_DIR
    const gateway = launch(env)
    try {
      await healthy(gateway, origin)
      const page = await fetch(`${origin}/ui/`)
      assert.strictEqual(page.status, 200)
      assert.match(page.headers.get("content-type") ?? "", /^text\/html/u)
      const html = await page.text()
      assert.include(html, "<title>Switchyard console</title>")
      const script = /<script[^>]+src="(\/ui\/assets\/[^"]+\.js)"/u.exec(html)?.[1]
      assert.isDefined(script, html)
      const asset = await fetch(`${origin}${script}`)
      assert.strictEqual(asset.status, 200)
      assert.isAbove((await asset.arrayBuffer()).byteLength, 1000)
      assert.include(gateway.stdout(), `"console: ${origin}/ui/"`)
    } finally {
      await gateway.stop()
    }
  }, 300_000)

  it("Ctrl-C (SIGINT to the terminal's whole process group: pnpm, the shells between, node) stops it gracefully with exit code 0 and no error from pnpm", async () => {
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const path = scriptPath()
    // `npx -y pnpm@10 start` runs pnpm's script on a real node binary (no shell between); here in a
    // process group of its own, as a terminal runs it.
    const pnpm = Fs.realpathSync(ChildProcess.execFileSync("sh", ["-c", "command -v pnpm"], { env: { ...process.env, PATH: path }, encoding: "utf8" }).trim())
    const command = /\.[cm]?js$/u.test(pnpm) ? [process.execPath, pnpm] : [pnpm]
    const run = ChildProcess.spawn(command[0]!, [...command.slice(1), "start"], {
      cwd: root,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PATH: path, SWITCHYARD_PORT: String(port), SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_DATA_DIR: dataDirWithStore(), DATABASE_URL: "", SWITCHYARD_LOG_FORMAT: "json" }
    })
    let output = ""
    run.stdout.on("data", (chunk) => (output += String(chunk)))
    run.stderr.on("data", (chunk) => (output += String(chunk)))
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => run.once("exit", (code, signal) => resolve({ code, signal })))
    try {
      const deadline = Date.now() + 240_000
      for (;;) {
        assert.isNull(run.exitCode, output)
        assert.isBelow(Date.now(), deadline, output)
        const ok = await fetch(`${origin}/api/v1/health`).then((r) => r.ok, () => false)
        if (ok) break
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
      process.kill(-run.pid!, "SIGINT")
      assert.deepStrictEqual(await exited, { code: 0, signal: null }, output)
      assert.notMatch(output, /ELIFECYCLE|ERR_PNPM|Command failed/u)
      assert.include(output, "Switchyard is shutting down (SIGINT)")
      assert.include(output, "Switchyard stopped")
    } finally {
      try {
        process.kill(-run.pid!, "SIGKILL")
      } catch {
        // The whole group is gone.
      }
    }
  }, 300_000)

  it("runs the server on the Node the repository pins, which the published server's engines admit", () => {
    const pinned = packageJson(".").devDependencies.node as string
    assert.isTrue(NodeVersion.isSupported(pinned), pinned)
    // Published only: in the workspace pnpm runs on the system's Node and would warn on install.
    assert.strictEqual(packageJson("apps/server").publishConfig.engines.node, NodeVersion.range)
    assert.isUndefined(packageJson("apps/server").engines)
  })
})

describe("the Node version check", () => {
  it("admits 22.19.0 and later, refuses anything older", () => {
    for (const version of ["22.19.0", "v22.19.0", "22.20.1", "23.0.0", "24.21.0", "v25.1.0-nightly2026"]) {
      assert.isTrue(NodeVersion.isSupported(version), version)
      assert.isUndefined(NodeVersion.problem(version))
    }
    for (const version of ["22.18.9", "v22.0.0", "21.99.99", "20.20.2", "v18.20.8", "0.10.48"]) {
      assert.isFalse(NodeVersion.isSupported(version), version)
    }
  })

  it("names the version it needs and the one it found, in one line", () => {
    const line = NodeVersion.problem("v20.20.2")!
    assert.include(line, "Node.js 22.19.0 or later")
    assert.include(line, "this is Node.js 20.20.2")
    assert.notInclude(line, "\n")
  })
})

/** The Node binaries on PATH other than the one running the tests, with their versions. */
const otherNodes = (): ReadonlyArray<{ readonly path: string; readonly version: string }> => {
  const found = ChildProcess.spawnSync("sh", ["-c", "which -a node"], { encoding: "utf8", env: { ...process.env, PATH: process.env.PATH ?? "" } })
  const paths = [...new Set([...(found.stdout ?? "").split("\n"), "/usr/bin/node", "/usr/local/bin/node"])]
    .filter((p) => p !== "" && Fs.existsSync(p))
  return paths.flatMap((path) => {
    const version = ChildProcess.spawnSync(path, ["--version"], { encoding: "utf8" })
    return version.status === 0 ? [{ path, version: version.stdout.trim() }] : []
  })
}

const oldNode = otherNodes().find((node) => !NodeVersion.isSupported(node.version))

describe("the production command on an older Node", () => {
  // The unit tests above cover the check itself; this one needs an older Node on the machine.
  it.skipIf(oldNode === undefined)(`exits with one line naming both versions (${oldNode?.path ?? "no older Node found"} ${oldNode?.version ?? ""})`, () => {
    const [node, ...args] = productionCommand(oldNode!.path)
    const run = ChildProcess.spawnSync(node!, args, { encoding: "utf8", env: { ...process.env, SWITCHYARD_PORT: "1" }, timeout: 60_000 })
    assert.strictEqual(run.status, 1, run.stderr)
    const lines = run.stderr.split("\n").filter((line) => line.trim() !== "")
    assert.deepStrictEqual(lines, [`switchyard: cannot start: ${NodeVersion.problem(oldNode!.version)}`])
    assert.include(lines[0], `this is Node.js ${oldNode!.version.replace(/^v/u, "")}`)
    assert.strictEqual(run.stdout, "")
  })
})

// The production command lives in two places an operator runs: the start script
// (`apps/server/package.json`, which `pnpm start`, the bench and the bundle tests use) and the
// Dockerfile's CMD. Its V8 flags are not part of Node's stable interface: a Node that no longer
// knows one refuses to start ("bad option").
const startScript = (() => {
  const words = (packageJson("apps/server") as { readonly scripts: { readonly start: string } }).scripts.start.trim().split(/\s+/u)
  // What follows the shell's set-up (`trap '' INT && `): the command itself.
  return words.slice(words.indexOf("node"))
})()

describe("the production command", () => {
  it("the Dockerfile runs the start script's command", () => {
    const dockerfile = Fs.readFileSync(NodePath.join(root, "Dockerfile"), "utf8")
    const cmd = /^CMD (\[.*\])$/mu.exec(dockerfile)
    assert.isNotNull(cmd, "the Dockerfile has an exec-form CMD")
    assert.deepStrictEqual(JSON.parse(cmd![1]!), startScript)
  })

  it("Node accepts the start script's flags", () => {
    const flags = startScript.filter((word) => word.startsWith("--"))
    const run = ChildProcess.spawnSync(process.execPath, [...flags, "-e", "0"], { encoding: "utf8" })
    assert.strictEqual(run.status, 0, run.stderr)
  })
})
