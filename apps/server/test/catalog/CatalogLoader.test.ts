import { assert, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { readFile } from "../../src/catalog/CatalogLoader.ts"

const provider = {
  slug: "acme",
  name: "Acme",
  adapter: "openai",
  base_url: "http://127.0.0.1:9/v1",
  api_key_env: "ACME_API_KEY",
  data_collection: "deny",
  zdr: true,
  endpoints: [{
    model: "acme/embed-small",
    upstream_model: "embed-small",
    pricing: { prompt: "0.02", request: "0", image: "0", audio: "0" },
    quantization: "fp32",
    dimensions: 8,
    supported_parameters: ["dimensions"],
    max_batch_items: 16
  }]
}

const yamlText = `providers:
  - slug: acme
    name: Acme
    adapter: openai
    base_url: http://127.0.0.1:9/v1
    api_key_env: ACME_API_KEY
    data_collection: deny
    zdr: true
    endpoints:
      - model: acme/embed-small
        upstream_model: embed-small
        pricing: { prompt: "0.02", request: "0", image: "0", audio: "0" }
        quantization: fp32
        dimensions: 8
        supported_parameters: [dimensions]
        max_batch_items: 16
`

const withFile = <A>(name: string, text: string, use: (path: string) => Effect.Effect<A, unknown>) =>
  Effect.acquireUseRelease(
    Effect.sync(() => {
      const dir = Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-catalog-"))
      const path = NodePath.join(dir, name)
      Fs.writeFileSync(path, text)
      return path
    }),
    use,
    (path) => Effect.sync(() => Fs.rmSync(NodePath.dirname(path), { recursive: true, force: true }))
  )

describe("config file", () => {
  it.effect("a JSON file and the same catalog in YAML read the same", () =>
    Effect.gen(function*() {
      const fromJson = yield* withFile("switchyard.json", JSON.stringify({ providers: [provider] }), readFile)
      const fromYaml = yield* withFile("switchyard.yaml", yamlText, readFile)
      assert.deepStrictEqual(fromYaml, fromJson)
      assert.strictEqual(fromYaml.providers[0]?.slug, "acme")
    }))

  it.effect("a malformed YAML or JSON file is a CatalogLoadError naming the file", () =>
    Effect.gen(function*() {
      for (const [name, text] of [["bad.yaml", "providers: [\n  - slug: acme\n  slug: twice"], ["bad.json", "{\"providers\": ["]] as const) {
        const error = yield* withFile(name, text, (path) => Effect.flip(readFile(path)))
        assert.strictEqual(error._tag, "CatalogLoadError")
        assert.include(error.message, name)
        assert.include(error.message, "is not valid JSON or YAML")
      }
    }))
})
