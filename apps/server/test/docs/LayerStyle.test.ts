import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"

/**
 * The rule of docs/architecture.md ("Services and their layers"): a service class declared in the
 * server carries its own layer (`static readonly layer`); a module-level layer only builds services
 * declared elsewhere, or several services at once.
 */

const serverSrc = NodePath.resolve(import.meta.dirname, "..", "..", "src")

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(NodePath.join(dir, entry.name))
      : entry.name.endsWith(".ts") ? [NodePath.join(dir, entry.name)] : []
  )

/** The service classes a file declares (`class X extends Context.Service<…>`). */
const declaredServices = (text: string): Set<string> =>
  new Set([...text.matchAll(/^(?:export )?class (\w+) extends Context\.Service\b/gmu)].map((m) => m[1]!))

/**
 * The exported module-level constants whose definition builds a layer, each with its text: from
 * `export const` at the start of a line to the next top-level statement (a class body's statics are
 * indented, so they are not module-level; a private helper the class's statics call is part of them).
 */
const moduleLayers = (text: string): Array<{ readonly name: string; readonly text: string }> => {
  const lines = text.split("\n")
  const found: Array<{ name: string; text: string }> = []
  for (let i = 0; i < lines.length; i++) {
    const start = /^export const (\w+)\b/u.exec(lines[i]!)
    if (start === null) continue
    let end = i + 1
    while (end < lines.length && !/^(?:export |const |let |function |class |interface |type |\/\*\*|\/\/)/u.test(lines[end]!)) end++
    const body = lines.slice(i, end).join("\n")
    if (/\bLayer\.\w+/u.test(body)) found.push({ name: start[1]!, text: body })
  }
  return found
}

/** The services a layer's text builds: `Layer.effect(X, …)`, `Layer.succeed(X, …)`, `Context.make(X, …)`, … (by their last name). */
const builtServices = (text: string): Set<string> =>
  new Set(
    [...text.matchAll(/\b(?:Layer\.(?:effect|succeed|sync|scoped)|Context\.(?:make|add))\(\s*([\w.]+)/gu)]
      .map((m) => m[1]!.split(".").at(-1)!)
  )

/** `file: layer builds X`, for each module-level layer that builds one service and that service is declared in the same file. */
const violations = (file: string, text: string): Array<string> => {
  const declared = declaredServices(text)
  return moduleLayers(text).flatMap(({ name, text: body }) => {
    const built = [...builtServices(body)]
    return built.length === 1 && declared.has(built[0]!)
      ? [`${file}: module-level \`${name}\` builds ${built[0]}, declared here: make it \`static readonly layer\` on ${built[0]}`]
      : []
  })
}

describe("one way to declare a service and its layer", () => {
  it("no file of the server declares a service class and builds it with a module-level layer", () => {
    const found = sourceFiles(serverSrc).flatMap((file) =>
      violations(NodePath.relative(serverSrc, file), Fs.readFileSync(file, "utf8"))
    )
    assert.deepStrictEqual(found, [])
  })

  it("sees the server's module-level layers (the check reads real layers, not none)", () => {
    const files = sourceFiles(serverSrc).filter((file) => moduleLayers(Fs.readFileSync(file, "utf8")).length > 0)
    assert.includeMembers(files.map((file) => NodePath.relative(serverSrc, file)), [
      NodePath.join("store", "redis", "RedisConnection.ts"),
      NodePath.join("catalog", "LiveCatalog.ts")
    ])
  })

  it("reports a planted service built by a module-level layer", () => {
    const planted = [
      `import { Context, Effect, Layer } from "effect"`,
      `export class Planted extends Context.Service<Planted, { readonly n: number }>()("Planted") {}`,
      `const make = Effect.succeed(Planted.of({ n: 1 }))`,
      `export const layer = Layer.effect(`,
      `  Planted,`,
      `  make`,
      `)`
    ].join("\n")
    assert.deepStrictEqual(violations("Planted.ts", planted), [
      "Planted.ts: module-level `layer` builds Planted, declared here: make it `static readonly layer` on Planted"
    ])
  })

  it("accepts the layer on the class, a port declared elsewhere, and several services at once", () => {
    const onTheClass = [
      `export class Planted extends Context.Service<Planted, { readonly n: number }>()("Planted") {`,
      `  static readonly layer = Layer.succeed(Planted, Planted.of({ n: 1 }))`,
      `}`
    ].join("\n")
    const port = `export const layer = Layer.effect(ApiKeyStore, make)`
    const several = [
      `export class Status extends Context.Service<Status, { readonly up: boolean }>()("Status") {}`,
      `export const layer = Layer.effectContext(Effect.gen(function*() {`,
      `  return Context.make(Redis.Redis, redis).pipe(Context.add(Status, status))`,
      `}))`
    ].join("\n")
    assert.deepStrictEqual([onTheClass, port, several].flatMap((text) => violations("Planted.ts", text)), [])
  })
})
