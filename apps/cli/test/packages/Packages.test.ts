import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { promisify } from "node:util"
import { type RunningServer, startServer } from "../../../server/test/support/TestServer.ts"

const run = promisify(ChildProcess.execFile)
const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const packages = ["packages/core", "packages/client", "apps/cli"]

/** pnpm as this test was started by it (`npm_execpath`), else the one on PATH. */
const pnpm = (args: ReadonlyArray<string>, cwd: string) => {
  const execpath = process.env.npm_execpath
  return execpath?.includes("pnpm")
    ? run(process.execPath, [execpath, ...args], { cwd, maxBuffer: 64 * 1024 * 1024 })
    : run("pnpm", [...args], { cwd, maxBuffer: 64 * 1024 * 1024 })
}

// Packing, installing from the registry and type-checking take a minute or two: this suite is
// `pnpm test:packages`, a step of CI of its own.
describe.runIf(process.env.SWITCHYARD_TEST_PACKAGES === "1")("the published packages, installed outside the workspace", () => {
  let scratch: string
  let server: RunningServer
  const env = () => ({ ...process.env, SWITCHYARD_BASE_URL: server.baseUrl, SWITCHYARD_API_KEY: server.managementKey })

  beforeAll(async () => {
    await run(NodePath.join(root, "node_modules", ".bin", "turbo"), [
      "run", "build", "--filter=@switchyard/core", "--filter=@switchyard/client", "--filter=@switchyard/cli", "--output-logs=errors-only"
    ], { cwd: root, env: { ...process.env, TURBO_TELEMETRY_DISABLED: "1" }, maxBuffer: 64 * 1024 * 1024 })
    scratch = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-consumer-"))
    const tarballs: Array<string> = []
    for (const dir of packages) {
      const { stdout } = await pnpm(["pack", "--pack-destination", scratch], NodePath.join(root, dir))
      tarballs.push(NodePath.join(scratch, NodePath.basename(stdout.trim().split("\n").at(-1)!)))
    }
    Fs.writeFileSync(NodePath.join(scratch, "package.json"), JSON.stringify({ name: "consumer", private: true, type: "module" }))
    await run("npm", ["install", "--no-audit", "--no-fund", "--loglevel=error", ...tarballs], { cwd: scratch, maxBuffer: 64 * 1024 * 1024 })
    server = await startServer()
  }, 600_000)

  afterAll(async () => {
    await server?.close()
    if (scratch !== undefined) Fs.rmSync(scratch, { recursive: true, force: true })
  })

  it("each tarball holds built JavaScript and declarations, no TypeScript sources", () => {
    for (const name of ["core", "client", "cli"]) {
      const dir = NodePath.join(scratch, "node_modules", "@switchyard", name)
      const manifest = JSON.parse(Fs.readFileSync(NodePath.join(dir, "package.json"), "utf8"))
      assert.notInclude(JSON.stringify(manifest.dependencies ?? {}), "workspace:", name)
      assert.notInclude(JSON.stringify(manifest.exports ?? {}), "/src/", name)
      assert.isFalse(Fs.existsSync(NodePath.join(dir, "src")), `${name} ships its sources`)
    }
    assert.isTrue(Fs.existsSync(NodePath.join(scratch, "node_modules", "@switchyard", "client", "dist", "Switchyard.d.ts")))
  })

  it("a program imports the client and calls a running gateway", async () => {
    const program = `
      import { Switchyard } from "@switchyard/client/Switchyard"
      import { Api } from "@switchyard/core/api/Api"
      await using switchyard = new Switchyard({})
      const keys = await switchyard.keys.list({ query: {} })
      await using standard = new Switchyard({ apiKey: process.env.STANDARD_KEY })
      const embedded = await standard.embeddings.create({ payload: { model: "switchyard/local-embed", input: ["hello"], dimensions: 8 } })
      console.log(JSON.stringify({ keys: keys.data.length, width: embedded.data[0].embedding.length, api: typeof Api }))
    `
    Fs.writeFileSync(NodePath.join(scratch, "program.mjs"), program)
    const { stdout } = await run(process.execPath, ["program.mjs"], { cwd: scratch, env: { ...env(), STANDARD_KEY: server.apiKey } })
    assert.deepStrictEqual(JSON.parse(stdout), { keys: 2, width: 8, api: "function" })
  }, 60_000)

  it("TypeScript checks a program against the published declarations", async () => {
    Fs.writeFileSync(NodePath.join(scratch, "typed.ts"), `
      import { Switchyard } from "@switchyard/client/Switchyard"
      import * as Money from "@switchyard/core/catalog/Money"
      const switchyard = new Switchyard({ apiKey: "sk-sy-v1-x" })
      export const listed: Promise<number> = switchyard.keys.list({ query: {} }).then((r) => r.data.length)
      export const units = Money.toUnits
    `)
    Fs.writeFileSync(NodePath.join(scratch, "tsconfig.json"), JSON.stringify({
      compilerOptions: { target: "ES2023", module: "NodeNext", moduleResolution: "NodeNext", lib: ["ES2023", "ESNext.Disposable", "DOM"], strict: true, noEmit: true, skipLibCheck: false, types: [] },
      files: ["typed.ts"]
    }))
    const tsc = NodePath.join(root, "node_modules", ".bin", "tsc")
    const result = await run(tsc, ["-p", "tsconfig.json"], { cwd: scratch }).then(() => "", (e: { stdout?: string }) => e.stdout ?? String(e))
    assert.strictEqual(result, "")
  }, 120_000)

  it("the installed switchyard command runs from its bundle", async () => {
    const bin = NodePath.join(scratch, "node_modules", ".bin", "switchyard")
    const started = process.hrtime.bigint()
    const help = await run(bin, ["--help"], { cwd: scratch, env: env() })
    const ms = Number(process.hrtime.bigint() - started) / 1e6
    process.stdout.write(`switchyard --help from the installed package: ${Math.round(ms)} ms\n`)
    assert.include(help.stdout, "embed")
    const models = await run(bin, ["models", "list", "--json"], { cwd: scratch, env: env() })
    assert.include(JSON.parse(models.stdout).data.map((m: { id: string }) => m.id), "switchyard/local-embed")
  }, 60_000)
})
