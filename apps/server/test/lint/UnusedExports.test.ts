import { assert, describe, it } from "@effect/vitest"
import * as ChildProcess from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"

// `pnpm lint` ends in knip, which fails on an export no other module uses. It can only see one
// when the packages export their public modules by name (not `"./*"`, which makes every file an
// entry point). This file runs the lint script's knip command on a copy of the repository, as it
// is and with an unused export planted in a server module and in one of core's public modules.

const root = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")

/**
 * The repository's files but what git ignores (builds, data directories), with its `node_modules`
 * links (relative, so workspace packages resolve inside the copy; the package store is linked).
 */
const copyOfRepository = (): string => {
  const ignored = new Set(
    ChildProcess.execFileSync("git", ["ls-files", "--others", "--ignored", "--exclude-standard", "--directory"], { cwd: root, encoding: "utf8" })
      .split("\n").filter((path) => path !== "" && !path.includes("node_modules")).map((path) => path.replace(/\/$/u, ""))
  )
  const skipped = new Set([".git", ".pnpm", ".cache", ".vitest"])
  const copy = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-lint-"))
  Fs.cpSync(root, copy, {
    recursive: true,
    verbatimSymlinks: true,
    filter: (source) => !skipped.has(NodePath.basename(source)) && !ignored.has(NodePath.relative(root, source))
  })
  Fs.symlinkSync(NodePath.join(root, "node_modules", ".pnpm"), NodePath.join(copy, "node_modules", ".pnpm"))
  return copy
}

/** The knip command of the root `lint` script, as written there. */
const knipArgs = (): ReadonlyArray<string> => {
  const lint: string = JSON.parse(Fs.readFileSync(NodePath.join(root, "package.json"), "utf8")).scripts.lint
  const command = lint.split("&&").map((part) => part.trim()).find((part) => part.startsWith("knip "))
  assert.isDefined(command, `the lint script runs knip: ${lint}`)
  return command!.split(/\s+/).slice(1)
}

const knip = (cwd: string) => {
  const bin = NodePath.join(root, "node_modules", "knip", "bin", "knip.js")
  const result = ChildProcess.spawnSync(process.execPath, [bin, ...knipArgs()], {
    cwd,
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1", FORCE_COLOR: "0" }
  })
  return { status: result.status, output: `${result.stdout}${result.stderr}` }
}

const plant = (copy: string, file: string, name: string) =>
  Fs.appendFileSync(NodePath.join(copy, file), `\nexport const ${name} = 1\n`)

describe("the lint script's unused-export check", () => {
  it("passes on the repository and fails naming each export planted where nothing uses it", () => {
    const copy = copyOfRepository()
    try {
      const clean = knip(copy)
      assert.strictEqual(clean.status, 0, clean.output)

      plant(copy, "apps/server/src/store/money/LedgerBatch.ts", "plantedInServer")
      plant(copy, "packages/core/src/catalog/Money.ts", "plantedInCore")
      const planted = knip(copy)
      assert.strictEqual(planted.status, 1, planted.output)
      const lines = planted.output.split("\n")
      assert.isTrue(lines.some((l) => l.includes("plantedInServer") && l.includes("apps/server/src/store/money/LedgerBatch.ts")), planted.output)
      assert.isTrue(lines.some((l) => l.includes("plantedInCore") && l.includes("packages/core/src/catalog/Money.ts")), planted.output)
      assert.strictEqual(lines.filter((l) => l.includes("planted")).length, 2, planted.output)
    } finally {
      Fs.rmSync(copy, { recursive: true, force: true })
    }
  }, 120_000)
})
