import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as Fields from "../../src/adapters/Fields.ts"
import type { ProviderModule } from "../../src/adapters/ProviderModule.ts"
import * as Registry from "../../src/adapters/Registry.ts"
import * as BuiltinCatalog from "../../src/catalog/BuiltinCatalog.ts"
import * as Catalog from "../../src/catalog/Catalog.ts"

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const modulesDir = NodePath.join(repoRoot, "packages", "core", "src", "adapters", "modules")
const providerFields = new Set(Object.keys(Catalog.Provider.fields))
const selfHostedFields = Object.keys(Fields.SelfHostedFields.fields)

/** What a module lacks of what its kind needs, in words (none: it is whole). */
const lacks = (module: ProviderModule): Array<string> => {
  const out: Array<string> = []
  const own = Object.keys(module.fields)
  if (module.name.trim() === "") out.push("a display name")
  if (module.form.credentialHint.trim() === "") out.push("the add form's credential hint")
  for (const field of module.needs) if (!providerFields.has(field)) out.push(`a config field ${field} it needs`)
  for (const entry of module.catalog) if (entry.adapter !== module.id) out.push(`a built-in provider of its own adapter (${String(entry.slug)})`)
  if (module.batchPlacement !== undefined && module.batchApi({}) === undefined) out.push("a batch API for its batch placement")
  switch (module.kind) {
    case "self-hosted":
      for (const field of selfHostedFields) if (!own.includes(field)) out.push(`the self-hosted field ${field}`)
      if (!module.baseUrl.required || !/^http:\/\//u.test(module.baseUrl.default)) out.push("a server's base URL, named by its config")
      break
    case "cloud":
      if (module.identity === undefined) out.push("the cloud identity that stands for its key")
      if (module.needs.length === 0) out.push("the placement fields it needs (a region, a project, an api-version)")
      if (module.form.start === undefined) out.push("the add form's starting point")
      break
    case "api":
      if (!/^https:\/\//u.test(module.baseUrl.default)) out.push("an https default base URL")
      if (module.identity !== undefined) out.push("no cloud identity (an API's key is its credential)")
      break
    case "in-process":
      if (module.baseUrl.required) out.push("no base URL (it runs in the gateway)")
      break
  }
  if (module.form.start !== undefined && module.form.start.provider.adapter !== module.id) out.push("an add form that starts from its own adapter")
  return out
}

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.name === "node_modules" || entry.name === "dist"
      ? []
      : entry.isDirectory()
      ? sourceFiles(NodePath.join(dir, entry.name))
      : /\.tsx?$/u.test(entry.name) ? [NodePath.join(dir, entry.name)] : []
  )

describe("the adapters' registry", () => {
  it("holds each adapter once, in a module file named by its id", () => {
    assert.strictEqual(new Set(Registry.adapterIds).size, Registry.adapterIds.length)
    const files = Fs.readdirSync(modulesDir).filter((f) => f.endsWith(".ts")).map((f) => f.slice(0, -3)).sort()
    assert.deepStrictEqual(files, [...Registry.adapterIds].sort())
  })

  it("gives every module every part its kind needs", () => {
    for (const module of Registry.modules) assert.deepStrictEqual(lacks(module), [], `module ${module.id}`)
  })

  it("finds the part a planted module lacks", () => {
    const tei = Registry.moduleOf("tei")
    const bedrock = Registry.moduleOf("bedrock")
    assert.include(lacks({ ...tei, fields: {} }), "the self-hosted field base_urls")
    assert.include(lacks({ ...bedrock, identity: undefined }), "the cloud identity that stands for its key")
    assert.include(lacks({ ...bedrock, needs: [] }), "the placement fields it needs (a region, a project, an api-version)")
    assert.include(lacks({ ...bedrock, needs: ["zone"] }), "a config field zone it needs")
  })

  it("is what the config file's adapter accepts and the built-in catalog lists", () => {
    assert.deepStrictEqual(Catalog.Provider.fields.adapter.literals, Registry.adapterIds)
    const builtinAdapters = new Set(BuiltinCatalog.builtin.providers.map((p) => p.adapter))
    for (const module of Registry.modules) assert.strictEqual(builtinAdapters.has(module.id), module.catalog.length > 0, module.id)
    assert.strictEqual(BuiltinCatalog.builtin.providers.length, Registry.modules.reduce((n, m) => n + m.catalog.length, 0))
  })

  it("is the only list of the adapter ids in any package's source", () => {
    const quoted = new RegExp(`"(${Registry.adapterIds.join("|")})"`, "gu")
    const lists: Array<string> = []
    for (const base of ["apps", "packages"]) {
      for (const file of sourceFiles(NodePath.join(repoRoot, base)).filter((f) => f.includes(`${NodePath.sep}src${NodePath.sep}`))) {
        if (file.startsWith(modulesDir)) continue
        Fs.readFileSync(file, "utf8").split("\n").forEach((line, i) => {
          // The batch APIs are wire formats of their own that share names with adapters.
          if (/export const BatchApi = /u.test(line)) return
          const ids = new Set([...line.matchAll(quoted)].map((m) => m[1]))
          if (ids.size >= 3) lists.push(`${NodePath.relative(repoRoot, file)}:${i + 1}`)
        })
      }
    }
    assert.deepStrictEqual(lists, [])
  })
})
