import { assert, describe, it } from "@effect/vitest"
import { OpenApi } from "effect/http-api"
import { Api } from "../../src/api/Api.ts"
import * as UnknownFields from "../../src/api/UnknownFields.ts"

const closed = { type: "object", properties: { a: { type: "string" } }, patternProperties: { "^(?!a$)": false }, additionalProperties: false }
const body = (schema: object) => ({ requestBody: { content: { "application/json": { schema } } } })

describe("UnknownFields", () => {
  it("opens the objects of a lenient body, keeps closed ones and strict bodies closed, copies a component both use", () => {
    const spec = {
      paths: {
        "/lenient": { post: { operationId: "lenient", ...body({ $ref: "#/components/schemas/Shared" }) } },
        "/strict": { patch: { operationId: "strict", ...body({ $ref: "#/components/schemas/Shared" }) } }
      },
      components: {
        schemas: {
          Shared: {
            type: "object",
            properties: { inner: { type: "object", properties: {}, additionalProperties: false }, prefs: closed },
            additionalProperties: false
          }
        }
      }
    }
    const written = UnknownFields.written(spec, new Map([["lenient", "ignored"], ["strict", "refused"]])) as any
    const lenient = written.paths["/lenient"].post.requestBody
    const strict = written.paths["/strict"].patch.requestBody
    assert.strictEqual(lenient["x-switchyard-unknown-fields"], "ignored")
    assert.strictEqual(strict["x-switchyard-unknown-fields"], "refused")
    assert.include(lenient.description, "ignored")
    const copy = lenient.content["application/json"].schema.$ref.split("/").at(-1)
    assert.notStrictEqual(copy, "Shared")
    const opened = written.components.schemas[copy]
    assert.isTrue(opened.additionalProperties)
    assert.isTrue(opened.properties.inner.additionalProperties)
    assert.isFalse(opened.properties.prefs.additionalProperties, "an object closed by pattern stays closed")
    const shared = written.components.schemas.Shared
    assert.isFalse(shared.additionalProperties)
    assert.isFalse(shared.properties.inner.additionalProperties)
    assert.isFalse((spec.components.schemas.Shared as any).additionalProperties === true, "the input is left as it was")
  })

  it("reads the refusing routes from the API's definition: the intern operations, PATCH /workspaces and the managed providers", () => {
    const treatments = UnknownFields.treatments(Api)
    for (const id of ["interns.create", "interns.update", "workspaces.update", "providerAdmin.create"]) assert.strictEqual(treatments.get(id), "refused", id)
    for (const id of ["createEmbeddings", "keys.create", "workspaces.create", "cohereRerankV2"]) assert.strictEqual(treatments.get(id), "ignored", id)
    const document = OpenApi.fromApi(Api) as any
    assert.strictEqual(document.paths["/api/v1/embeddings"].post.requestBody["x-switchyard-unknown-fields"], "ignored")
    assert.strictEqual(document.paths["/api/v1/workspaces/{id}"].patch.requestBody["x-switchyard-unknown-fields"], "refused")
  })
})
