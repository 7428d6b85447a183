import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const page = Fs.readFileSync(NodePath.join(repoRoot, "docs", "architecture.md"), "utf8")
const coreSrc = NodePath.join(repoRoot, "packages", "core", "src")

/** The floor of each folder (`schema/`) and top-level file (`index.ts`) of core, from the page's "Core floors" table. */
const floorsOf = (text: string): Map<string, number> => {
  const start = text.indexOf("\n## Core floors\n")
  const end = text.indexOf("\n## ", start + 1)
  const floors = new Map<string, number>()
  for (const row of text.slice(start, end === -1 ? undefined : end).matchAll(/^\| (\d+) \| ([^|]+) \|/gmu)) {
    for (const name of row[2]!.matchAll(/`(?:packages\/core\/src\/)?([^`/]+\/?)`/gu)) floors.set(name[1]!, Number(row[1]))
  }
  return floors
}

const placeOf = (file: string): string => {
  const [first, ...rest] = NodePath.relative(coreSrc, file).split(NodePath.sep)
  return rest.length === 0 ? first! : `${first}/`
}

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(NodePath.join(dir, entry.name))
      : entry.name.endsWith(".ts") ? [NodePath.join(dir, entry.name)] : []
  )

/** Every relative import (static, dynamic, `export … from`) of a file that runs to the same floor's other places or a higher floor. */
const upwardImports = (floors: Map<string, number>, files: ReadonlyArray<[string, string]>): Array<string> =>
  files.flatMap(([file, text]) => {
    const from = placeOf(file)
    const own = floors.get(from)!
    return [...text.matchAll(/(?:from|import)\s*\(?\s*"(\.[^"]+)"/gu)].flatMap((m) => {
      const to = placeOf(NodePath.resolve(NodePath.dirname(file), m[1]!))
      const floor = floors.get(to)
      return to !== from && floor !== undefined && floor >= own
        ? [`${NodePath.relative(coreSrc, file)} imports ${m[1]} (${from} floor ${own} → ${to} floor ${floor})`]
        : []
    })
  })

describe("packages/core on floors (docs/architecture.md, Core floors)", () => {
  const floors = floorsOf(page)
  const files = sourceFiles(coreSrc).map((file): [string, string] => [file, Fs.readFileSync(file, "utf8")])

  it("gives every folder and top-level file of core a floor", () => {
    const places = new Set(files.map(([file]) => placeOf(file)))
    for (const place of places) assert.isTrue(floors.has(place), `${place} has no floor in the Core floors table`)
    for (const named of floors.keys()) assert.isTrue(places.has(named), `the table names ${named}, which core does not have`)
  })

  it("has no import to the same floor's other folders or a higher floor", () => {
    assert.deepStrictEqual(upwardImports(floors, files), [])
  })

  it("finds a planted upward import", () => {
    const planted: [string, string] = [
      NodePath.join(coreSrc, "schema", "Planted.ts"),
      `import { withRouting } from "../catalog/Catalog.ts"\nexport const planted = withRouting\n`
    ]
    assert.deepStrictEqual(upwardImports(floors, [...files, planted]), [
      "schema/Planted.ts imports ../catalog/Catalog.ts (schema/ floor 2 → catalog/ floor 4)"
    ])
  })
})
