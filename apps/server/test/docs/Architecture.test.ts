import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const page = Fs.readFileSync(NodePath.join(repoRoot, "docs", "architecture.md"), "utf8")

/** Where a path named on the page lives: as written from the repository's root, else under the server's `src/`. */
const resolve = (named: string): string | undefined =>
  [named, NodePath.join("apps", "server", "src", named)]
    .map((candidate) => NodePath.join(repoRoot, candidate))
    .find((candidate) => Fs.existsSync(candidate))

describe("docs/architecture.md", () => {
  const named = [...new Set([...page.matchAll(/`([\w./-]+\.ts|packages\/[\w./-]+)`/gu)].map((m) => m[1]!))]

  it("names the files of the request path", () => {
    assert.isAtLeast(named.length, 40, "the page names the file that owns each step")
  })

  it("names only files and folders that exist", () => {
    const missing = named.filter((path) => resolve(path) === undefined)
    assert.deepStrictEqual(missing, [], `named in docs/architecture.md but not in the repository: ${missing.join(", ")}`)
  })
})
