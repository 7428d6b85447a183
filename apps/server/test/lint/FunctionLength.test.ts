import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { isFunctionLikeDeclaration } from "typescript/unstable/ast/is"
import { API } from "typescript/unstable/sync"

// No function in any package's source is longer than 150 lines (docs/architecture.md, "Functions"):
// a longer one is a module's worth of work in one closure, to be split into named helpers or
// modules. The files are parsed with the TypeScript compiler's API (each file alone: no imports
// resolved, no library read), and every function, arrow, method, accessor and constructor counted
// from its first line to its last.

const maxLines = 150

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")

/** Every package's source folder: each app's and library's `src/`, and the bench's. */
const sourceRoots = [
  ...["apps", "packages"].flatMap((group) =>
    Fs.readdirSync(NodePath.join(repoRoot, group)).map((name) => NodePath.join(repoRoot, group, name, "src"))
  ),
  NodePath.join(repoRoot, "bench", "src")
].filter((dir) => Fs.existsSync(dir))

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(NodePath.join(dir, entry.name))
      : /\.tsx?$/u.test(entry.name) && !entry.name.endsWith(".d.ts") ? [NodePath.join(dir, entry.name)] : []
  )

interface Long {
  /** The file, relative to the folder searched. */
  readonly file: string
  readonly line: number
  readonly name: string
  readonly lines: number
}

const describeLong = (long: Long) => `${long.file}:${long.line} ${long.name} (${long.lines} lines)`

/** Each function of the files longer than `maxLines`, its file relative to `root`. */
const longFunctions = (root: string, files: ReadonlyArray<string>): Array<Long> => {
  const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-function-length-"))
  const api = new API({ cwd: dir })
  try {
    const config = NodePath.join(dir, "tsconfig.json")
    Fs.writeFileSync(config, JSON.stringify({
      compilerOptions: { noResolve: true, noLib: true, types: [], noEmit: true, allowImportingTsExtensions: true, jsx: "preserve" },
      files
    }))
    const program = api.updateSnapshot({ openProject: config }).getProjects()[0]!.program
    const found: Array<Long> = []
    for (const file of files) {
      const source = program.getSourceFile(file)
      assert.isDefined(source, `${file} is parsed`)
      const lineOf = (position: number) => source!.getLineAndCharacterOfPosition(position).line + 1
      const visit = (node: Parameters<typeof isFunctionLikeDeclaration>[0]): void => {
        if (isFunctionLikeDeclaration(node)) {
          const first = lineOf(node.getStart(source))
          const lines = lineOf(node.getEnd()) - first + 1
          if (lines > maxLines) found.push({ file: NodePath.relative(root, file), line: first, name: nameOf(node), lines })
        }
        node.forEachChild(visit)
      }
      visit(source!)
    }
    return found
  } finally {
    api.close()
    Fs.rmSync(dir, { recursive: true, force: true })
  }
}

/** A function's name: its own or the variable, property or method it is assigned to; else the nearest named one it is in. */
const nameOf = (node: { readonly parent?: unknown }): string => {
  const named = (n: unknown): string | undefined => {
    const name = (n as { readonly name?: { readonly text?: unknown } } | undefined)?.name
    return typeof name?.text === "string" ? name.text : undefined
  }
  const own = named(node) ?? named(node.parent)
  if (own !== undefined) return own
  for (let n = node.parent as { readonly parent?: unknown } | undefined; n !== undefined; n = n.parent as typeof n) {
    const outer = named(n)
    if (outer !== undefined) return `(a function in ${outer})`
  }
  return "(a function)"
}

describe("function length", () => {
  it("reads every package's source", () => {
    const places = sourceRoots.map((dir) => NodePath.relative(repoRoot, dir)).sort()
    assert.includeMembers(places, ["apps/cli/src", "apps/console/src", "apps/server/src", "apps/store-import/src", "bench/src", "packages/client/src", "packages/core/src"])
  })

  it("no function in any package's src is longer than 150 lines", () => {
    const found = longFunctions(repoRoot, sourceRoots.flatMap(sourceFiles))
    assert.deepStrictEqual(found.map(describeLong), [], "split these into named helpers or modules")
  })

  it("fails on a planted function of 151 lines, not on one of 150, in TypeScript and in JSX", () => {
    const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-function-plant-"))
    try {
      const body = (lines: number) => Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i}`).join("\n")
      const file = NodePath.join(dir, "Planted.ts")
      Fs.writeFileSync(file, [
        `export const long = () => {\n${body(151)}\n}`,
        `export function short() {\n${body(150)}\n}`,
        `export class Holder {\n  method() {\n${body(151)}\n  }\n}`
      ].join("\n"))
      // A console page: JSX parsed, the component counted like any function.
      const page = NodePath.join(dir, "Planted.tsx")
      Fs.writeFileSync(page, `export const Page = () => {\n${body(150)}\n  return <div title="v">{v0}</div>\n}\n`)
      const found = longFunctions(dir, [file, page])
      assert.deepStrictEqual(found.map(describeLong), ["Planted.ts:1 long (151 lines)", "Planted.ts:303 method (151 lines)", "Planted.tsx:1 Page (151 lines)"])
    } finally {
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })
})
