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

const serverSrc = NodePath.join(repoRoot, "apps", "server", "src")

/** The floor of each place named in the first column of a table of floors: the section under `heading`, up to the next one. */
const floorsUnder = (text: string, heading: string): Map<string, number> => {
  const start = text.indexOf(`\n## ${heading}\n`)
  const end = text.indexOf("\n## ", start + 1)
  const floors = new Map<string, number>()
  for (const row of text.slice(start, end === -1 ? undefined : end).matchAll(/^\| (\d+) \| ([^|]+) \|/gmu)) {
    for (const name of row[2]!.matchAll(/`([^`]+)`/gu)) floors.set(name[1]!, Number(row[1]))
  }
  return floors
}

/** The floor of each folder (`store/`) and top-level file (`Server.ts`) of the server, from the page's table of floors. */
const floors = floorsUnder(page, "Floors")

/** A file's place: its top folder under `src/` (`store/`), or its own name when it sits in `src/`. */
const placeOf = (file: string): string => {
  const [first, ...rest] = NodePath.relative(serverSrc, file).split(NodePath.sep)
  return rest.length === 0 ? first! : `${first}/`
}

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(NodePath.join(dir, entry.name))
      : entry.name.endsWith(".ts") ? [NodePath.join(dir, entry.name)] : []
  )

describe("docs/architecture.md", () => {
  const named = [...new Set([...page.matchAll(/`([\w./-]+\.ts|packages\/[\w./-]+)`/gu)].map((m) => m[1]!))]

  it("names the files of the request path", () => {
    assert.isAtLeast(named.length, 40, "the page names the file that owns each step")
  })

  it("names every folder and top-level file of the server on one floor", () => {
    const placed = [...floors.keys()].sort()
    const present = Fs.readdirSync(serverSrc).filter((entry) => entry.endsWith(".ts") || Fs.statSync(NodePath.join(serverSrc, entry)).isDirectory())
      .map((entry) => entry.endsWith(".ts") ? entry : `${entry}/`).sort()
    assert.deepStrictEqual(placed, present)
  })

  it("has no import from a floor to a higher one, nor between two places of one floor", () => {
    const wrong: Array<string> = []
    for (const file of sourceFiles(serverSrc)) {
      const from = placeOf(file)
      for (const match of Fs.readFileSync(file, "utf8").matchAll(/(?:from|import|import\()\s*"(\.{1,2}\/[^"]+)"/gu)) {
        const target = NodePath.resolve(NodePath.dirname(file), match[1]!)
        // Only the server's own sources have floors (its package.json is read, not layered).
        if (!target.startsWith(serverSrc + NodePath.sep)) continue
        const to = placeOf(target)
        if (to === from) continue
        const [fromFloor, toFloor] = [floors.get(from), floors.get(to)]
        if (fromFloor === undefined || toFloor === undefined || toFloor >= fromFloor) {
          wrong.push(`${NodePath.relative(serverSrc, file)} (${from}, floor ${fromFloor}) imports ${match[1]} (${to}, floor ${toFloor})`)
        }
      }
    }
    assert.deepStrictEqual(wrong, [])
  })

  it("names only files and folders that exist", () => {
    const missing = named.filter((path) => resolve(path) === undefined)
    assert.deepStrictEqual(missing, [], `named in docs/architecture.md but not in the repository: ${missing.join(", ")}`)
  })
})

const storeDir = NodePath.join(serverSrc, "store")

/** A store file's room: its folder under `store/` (`store/money/`), or `store/` itself for a file outside every room. */
const roomOf = (file: string): string => {
  const [first, ...rest] = NodePath.relative(storeDir, file).split(NodePath.sep)
  return rest.length === 0 ? "store/" : `store/${first}/`
}

/** Every relative import of a store file that runs to another room on its own floor or a higher one, or to a room without a floor. */
const upwardInStore = (rooms: Map<string, number>, files: ReadonlyArray<readonly [file: string, text: string]>): Array<string> =>
  files.flatMap(([file, text]) => {
    const from = roomOf(file)
    return [...text.matchAll(/(?:from|import|import\()\s*"(\.{1,2}\/[^"]+)"/gu)].flatMap((m) => {
      const target = NodePath.resolve(NodePath.dirname(file), m[1]!)
      if (!target.startsWith(storeDir + NodePath.sep)) return []
      const to = roomOf(target)
      const [fromFloor, toFloor] = [rooms.get(from), rooms.get(to)]
      return to !== from && (fromFloor === undefined || toFloor === undefined || toFloor >= fromFloor)
        ? [`${NodePath.relative(serverSrc, file)} imports ${m[1]} (${from} floor ${fromFloor} → ${to} floor ${toFloor})`]
        : []
    })
  })

describe("the store's rooms (docs/architecture.md, Store floors)", () => {
  const rooms = floorsUnder(page, "Store floors")
  const files = sourceFiles(storeDir).map((file) => [file, Fs.readFileSync(file, "utf8")] as const)

  it("gives every room of store/ a floor, names no other, and leaves no file outside a room", () => {
    const present = Fs.readdirSync(storeDir, { withFileTypes: true }).map((entry) => entry.isDirectory() ? `store/${entry.name}/` : `store/${entry.name}`)
    assert.deepStrictEqual([...rooms.keys()].sort(), present.sort())
  })

  it("has no import from a room to another on its floor or a higher one", () => {
    assert.deepStrictEqual(upwardInStore(rooms, files), [])
  })

  it("finds a planted import from the money room up to the database room, and one across its own floor", () => {
    const planted = [
      [NodePath.join(storeDir, "money", "Planted.ts"), `import { migrate } from "../database/Migrations.ts"\nimport { AuditLog } from "../audit/AuditLog.ts"\n`]
    ] as const
    assert.deepStrictEqual(upwardInStore(rooms, [...files, ...planted]), [
      "store/money/Planted.ts imports ../database/Migrations.ts (store/money/ floor 2 → store/database/ floor 3)",
      "store/money/Planted.ts imports ../audit/AuditLog.ts (store/money/ floor 2 → store/audit/ floor 2)"
    ])
  })
})

/** The lines of the server's sources outside `store/` that write SQL or branch on the store's dialect. */
const sqlOutsideStore = (files: ReadonlyArray<readonly [file: string, text: string]>): Array<string> =>
  files.flatMap(([file, text]) =>
    placeOf(file) === "store/"
      ? []
      : text.split("\n").flatMap((line, i) =>
        /\bsql(?:<[^>]*>)?`|\bonDialect|\b(?:driver|dialect) === /u.test(line) ? [`${NodePath.relative(serverSrc, file)}:${i + 1}`] : []
      )
  )

describe("the store's dialect stays in store/", () => {
  const files = sourceFiles(serverSrc).map((file) => [file, Fs.readFileSync(file, "utf8")] as const)

  it("has no SQL statement or dialect branch outside store/", () => {
    assert.deepStrictEqual(sqlOutsideStore(files), [])
  })

  it("finds a planted one", () => {
    const planted = [NodePath.join(serverSrc, "auth", "Planted.ts"), "const rows = sql<{ n: number }>`SELECT 1 AS n`\n"] as const
    assert.deepStrictEqual(sqlOutsideStore([...files, planted]), ["auth/Planted.ts:1"])
  })
})
