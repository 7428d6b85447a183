import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

// The production command lives in two places an operator runs: the start script
// (`apps/server/package.json`, which `pnpm start`, the bench and the bundle tests use) and the
// Dockerfile's CMD. Its V8 flags are not part of Node's stable interface: a Node that no longer
// knows one refuses to start ("bad option").

const root = NodePath.join(import.meta.dirname, "..", "..", "..", "..")
const startScript = (JSON.parse(Fs.readFileSync(NodePath.join(import.meta.dirname, "..", "..", "package.json"), "utf8")) as {
  readonly scripts: { readonly start: string }
}).scripts.start.trim().split(/\s+/u)

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
