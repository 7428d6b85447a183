import { assert, describe, it } from "@effect/vitest"
import { Result } from "effect"
import * as BuiltinCatalog from "../../src/catalog/BuiltinCatalog.ts"
import * as ModelName from "../../src/catalog/ModelName.ts"

const builtin = BuiltinCatalog.builtin
const only = (...slugs: ReadonlyArray<string>) => (p: { readonly slug: string }) => slugs.includes(p.slug)

describe("ModelName.resolve", () => {
  it("keeps a name with its vendor, and resolves a bare name that one served model has", () => {
    assert.deepStrictEqual(ModelName.resolve(builtin, "acme/anything", only()), Result.succeed("acme/anything"))
    assert.deepStrictEqual(ModelName.resolve(builtin, "Text-Embedding-3-Small", only("openai")), Result.succeed("openai/text-embedding-3-small"))
    assert.deepStrictEqual(ModelName.resolve(builtin, "bge-m3", only("deepinfra")), Result.succeed("baai/bge-m3"))
  })

  it("falls back to the catalog when no served model has the name, and leaves unknown names to routing's 404", () => {
    assert.deepStrictEqual(ModelName.resolve(builtin, "text-embedding-3-small", only()), Result.succeed("openai/text-embedding-3-small"))
    assert.deepStrictEqual(ModelName.resolve(builtin, "nothing-like-it", only("openai")), Result.succeed("nothing-like-it"))
  })

  it("refuses a bare name two served models share, naming both", () => {
    const twice = {
      ...builtin,
      providers: [...builtin.providers, {
        ...builtin.providers.find((p) => p.slug === "openai")!,
        slug: "copy",
        endpoints: [{ ...builtin.providers.find((p) => p.slug === "openai")!.endpoints[0]!, model: "acme/text-embedding-3-small" }]
      }]
    }
    const result = ModelName.resolve(twice, "text-embedding-3-small", only("openai", "copy"))
    assert.isTrue(Result.isFailure(result))
    if (Result.isFailure(result)) {
      assert.include(result.failure.message, "acme/text-embedding-3-small, openai/text-embedding-3-small")
      assert.deepStrictEqual(result.failure.metadata?.candidates, ["acme/text-embedding-3-small", "openai/text-embedding-3-small"])
    }
    assert.deepStrictEqual(ModelName.resolve(twice, "text-embedding-3-small", only("copy")), Result.succeed("acme/text-embedding-3-small"))
  })
})
