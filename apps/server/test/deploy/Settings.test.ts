import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { placementVariables } from "@switchyard/core/catalog/BuiltinCatalog"
import { awsCredentialEnv, identityVariables } from "@switchyard/core/catalog/Catalog"
import * as Settings from "../../src/Settings.ts"

const repoRoot = NodePath.resolve(import.meta.dirname, "..", "..", "..", "..")
const serverSrc = NodePath.join(repoRoot, "apps", "server", "src")

const sourceFiles = (dir: string): Array<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory()
      ? sourceFiles(NodePath.join(dir, entry.name))
      : entry.name.endsWith(".ts") ? [NodePath.join(dir, entry.name)] : []
  )

const sources = sourceFiles(serverSrc).map((file) => ({ file: NodePath.relative(serverSrc, file), text: Fs.readFileSync(file, "utf8") }))

/**
 * The variables the server's code reads by a literal name: every `SWITCHYARD_`/`OTEL_` string (the
 * gateway's prefixes; such a string names a variable wherever it stands), the name given to a
 * `Config` constructor (`Config.Int("X")`, `Config.Literals([...], "X")`), and `process.env.X`.
 */
const readInCode = (): Map<string, string> => {
  const found = new Map<string, string>()
  const patterns = [
    /"((?:SWITCHYARD|OTEL)_[A-Z0-9_]+)"/gu,
    /Config\.[A-Za-z]+\(\s*(?:\[[^\]]*\]\s*,\s*)?"([A-Z][A-Z0-9_]*)"/gu,
    /process\.env\.([A-Z][A-Z0-9_]*)/gu,
    /process\.env\["([A-Z][A-Z0-9_]*)"\]/gu
  ]
  for (const { file, text } of sources) {
    for (const pattern of patterns) for (const match of text.matchAll(pattern)) found.set(match[1]!, file)
  }
  return found
}

/** The files that read a variable whose name is not written there: a `Config` constructor given a variable, `process.env[name]`. */
const readsByComputedName = (): Array<string> =>
  sources
    .filter(({ text }) => /Config\.(?:String|Redacted|Int|Number|Boolean|Port|Duration|Url)\(\s*[a-z]/u.test(text) || /process\.env\[[a-z]/u.test(text))
    .map(({ file }) => file)
    .sort()

const names = new Set(Settings.all.map((s) => s.name))

/** The backquoted variable names of the configuration guide. */
const guide = Fs.readFileSync(NodePath.join(repoRoot, "docs", "configuration.md"), "utf8")
const guideSection = guide.slice(guide.indexOf("## Environment variables"), guide.indexOf("## The config file"))
const inGuide = new Set([...guide.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/gu)].map((m) => m[1]!))
const inGuideTable = new Set([...guideSection.matchAll(/`([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)`/gu)].map((m) => m[1]!))

describe("the settings list (Settings.ts)", () => {
  it("holds every variable the server's code reads, each once", () => {
    assert.strictEqual(names.size, Settings.all.length, "a setting is listed twice")
    const missing = [...readInCode()].filter(([name]) => !names.has(name) && !Settings.internal.includes(name))
    assert.deepStrictEqual(missing.map(([name, file]) => `${name} (read in ${file})`), [], "add each to Settings.ts, and to docs/configuration.md")
  })

  it("holds no variable that neither the code nor the catalog reads", () => {
    const read = readInCode()
    // The catalog's variables are read by computed name (CatalogLoader.ts) from these lists.
    const catalogRead = new Set([...Settings.providerKeys, ...placementVariables, ...identityVariables, ...awsCredentialEnv])
    const unread = Settings.all.filter((s) => s.readBy === "gateway" && !read.has(s.name) && !catalogRead.has(s.name)).map((s) => s.name)
    assert.deepStrictEqual(unread, [])
  })

  it("reads by computed name only where the names come from a list Settings.ts takes in (the catalog's, the first-start keys')", () => {
    // A new read by computed name elsewhere would escape the scan above: its names must reach Settings.ts another way.
    // Workers.ts reads its own internal variable (Settings.internal), named by a literal the scan finds.
    // http/SingleSignOn.ts reads the client secret from the variable the config file's `sso.client_secret_env`
    // names: the operator's choice, as a provider's `api_key_env` is.
    assert.deepStrictEqual(readsByComputedName(), ["Workers.ts", "auth/Bootstrap.ts", "catalog/CatalogLoader.ts", "catalog/LiveCatalog.ts", "http/SingleSignOn.ts"].map((f) => NodePath.normalize(f)))
  })

  it("marks credentials secret: the providers' keys, the secret key, the first-start keys, the store URLs", () => {
    const secret = new Set(Settings.all.filter((s) => s.secret).map((s) => s.name))
    for (const name of [...Settings.providerKeys, "SWITCHYARD_SECRET_KEY", "SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY", "SWITCHYARD_BOOTSTRAP_API_KEY", "DATABASE_URL", "REDIS_URL", "SWITCHYARD_METRICS_TOKEN"]) {
      assert.isTrue(secret.has(name), name)
    }
    assert.include(Settings.providerKeys, "OPENAI_API_KEY")
    assert.include(Settings.providerKeys, "AZURE_OPENAI_API_KEY")
  })
})

describe("docs/configuration.md", () => {
  it("names every setting of the list", () => {
    assert.deepStrictEqual(Settings.all.filter((s) => !inGuide.has(s.name)).map((s) => s.name), [])
  })

  it("names in its table of variables no variable the gateway does not read", () => {
    assert.deepStrictEqual([...inGuideTable].filter((name) => !names.has(name)), [])
  })

  it("never lists the internal ones as settings", () => {
    for (const name of Settings.internal) assert.isFalse(inGuideTable.has(name), name)
  })
})
