import { assert, describe, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { Api } from "../../src/api/Api.ts"

describe("EmbeddingsApi", () => {
  const spec = OpenApi.fromApi(Api)

  it("declares createEmbeddings with every status of the interface", () => {
    const op = spec.paths["/api/v1/embeddings"]?.post
    assert.strictEqual(op?.operationId, "createEmbeddings")
    assert.deepStrictEqual(
      Object.keys(op?.responses ?? {}).sort(),
      ["200", "400", "401", "402", "403", "404", "408", "413", "429", "500", "502", "503", "524", "529"]
    )
    assert.isAbove(op?.security.length ?? 0, 0)
  })

  it("declares listEmbeddingsModels with the SDK's paging query", () => {
    const op = spec.paths["/api/v1/embeddings/models"]?.get
    assert.strictEqual(op?.operationId, "listEmbeddingsModels")
    assert.deepStrictEqual(op?.parameters.map((p) => p.name).sort(), ["limit", "offset"])
  })
})
