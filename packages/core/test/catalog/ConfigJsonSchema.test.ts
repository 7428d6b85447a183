import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as Catalog from "../../src/catalog/Catalog.ts"
import * as ConfigJsonSchema from "../../src/catalog/ConfigJsonSchema.ts"

const committed = NodePath.join(import.meta.dirname, "..", "..", "..", "..", ConfigJsonSchema.path)

describe("the config file's JSON Schema", () => {
  it("is committed as generated from the core schema (run `pnpm config-schema` after changing the catalog)", () => {
    assert.strictEqual(Fs.readFileSync(committed, "utf8"), ConfigJsonSchema.text(), `${ConfigJsonSchema.path} is stale: run pnpm config-schema`)
  })

  it("describes every field the decoder knows, closed to the others", () => {
    const doc = ConfigJsonSchema.document() as any
    assert.strictEqual(doc.$schema, "https://json-schema.org/draft/2020-12/schema")
    assert.isFalse(doc.additionalProperties)
    assert.deepStrictEqual(Object.keys(doc.properties).sort(), ["$schema", "broadcast", "providers", "sso", "workspaces"])
    const provider = doc.properties.providers.items
    // `endpoints` may be left out: a self-hosted provider with `discover` serves what its server lists.
    assert.deepStrictEqual(provider.required, ["slug", "name", "adapter", "data_collection"])
    assert.deepStrictEqual(provider.properties.adapter.enum, ["openai", "cohere", "voyage", "gemini", "jina", "local", "bedrock", "tei", "ollama", "azure", "vertex", "infinity", "vllm"])
    const endpoint = provider.properties.endpoints.items
    assert.includeMembers(endpoint.required, ["model", "upstream_model", "pricing"])
    assert.isFalse(endpoint.additionalProperties)
  })

  it.effect("a config file that names the schema in `$schema` still decodes", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(Catalog.decode({ $schema: "./switchyard.schema.json", providers: [], workspaces: { default: { zdr: true } } }))
      assert.isTrue(Exit.isSuccess(exit))
    }))
})
