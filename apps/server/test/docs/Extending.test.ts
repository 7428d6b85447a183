import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const page = Fs.readFileSync(NodePath.join(repoRoot, "docs", "extending.md"), "utf8")

/** Every repository path a recipe names in backticks (`apps/…`, `packages/…`, `docs/…`); `<id>` and `<Name>` are the reader's. */
const pathsOf = (text: string): Array<string> =>
  [...new Set([...text.matchAll(/`((?:apps|packages|docs)\/[\w./<>-]+)`/gu)].map((m) => m[1]!))]
    .filter((path) => !path.includes("<"))

const missing = (paths: ReadonlyArray<string>): Array<string> => paths.filter((path) => !Fs.existsSync(NodePath.join(repoRoot, path)))

describe("docs/extending.md", () => {
  const paths = pathsOf(page)

  it("has its three recipes, each naming the files and the tests to copy", () => {
    for (const heading of ["## A new provider", "## A new request field on embeddings", "## A new management endpoint"]) {
      assert.include(page, heading)
    }
    assert.isAtLeast(paths.filter((path) => path.includes("/test/") || path.endsWith(".e2e.ts")).length, 12)
    assert.isAtLeast(paths.length, 50)
  })

  it("names only paths that exist", () => {
    assert.deepStrictEqual(missing(paths), [])
  })

  it("finds a path that does not exist", () => {
    assert.deepStrictEqual(missing(pathsOf("`apps/server/src/providers/Nowhere.ts` and `docs/extending.md`")), [
      "apps/server/src/providers/Nowhere.ts"
    ])
  })
})
