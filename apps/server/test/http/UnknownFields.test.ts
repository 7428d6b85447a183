import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"
import { credentialOf, fill, request, setUp, type Tenants, validRequests } from "../support/Tenants.ts"

// Issue 65: the OpenAPI document said no body allows other properties, while most routes ignore
// them (as OpenRouter's do) and a few refuse them. Now each request body says which
// (`x-switchyard-unknown-fields`, and `additionalProperties` at each level), and this test holds
// the gateway to it: for every route with a JSON body, its valid body with an unknown field added
// at the top and inside each of its objects.

type Json = Record<string, any>

const unknownField = "zz_not_a_field"

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

describe(`unknown fields of request bodies, as the OpenAPI document says (${storeKind})`, () => {
  let server: RunningServer
  let tenants: Tenants
  let document: Json
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_RATE_LIMIT: "off" } })
    tenants = await setUp(server.origin, server)
    document = (await request(server.origin, { method: "GET", path: "/api/v1/openapi.json" })).json
  }, 60_000)
  afterAll(() => server.close())

  // A schema with its reference followed, or the object branch of an `anyOf` (`X | null`).
  const resolve = (schema: Json | undefined): Json | undefined => {
    if (schema === undefined) return undefined
    if (typeof schema.$ref === "string") return resolve(document.components.schemas[schema.$ref.split("/").at(-1)!])
    if (Array.isArray(schema.anyOf)) return schema.anyOf.map(resolve).find((s: Json | undefined) => s?.type === "object")
    return schema
  }

  it("every body says ignored or refused, and the gateway does what it says, at the top and inside each object", async () => {
    const valid = validRequests(tenants)
    // A provider of the test's own for the strict PATCH (the table's targets none).
    const managed = { slug: "unknown-fields", name: "U", adapter: "openai", base_url: "http://127.0.0.1:9/v1", data_collection: "deny", endpoints: [] }
    const created = await request(server.origin, { method: "POST", path: "/api/v1/providers", key: tenants.keys.managementA, body: managed })
    assert.strictEqual(created.status, 201, created.text)
    const checked: Array<string> = []
    let n = 0
    for (const [path, methods] of Object.entries(document.paths as Record<string, Json>)) {
      for (const [method, operation] of Object.entries(methods)) {
        const json = operation.requestBody?.content?.["application/json"]
        if (json === undefined) continue
        const id = operation.operationId as string
        const treatment = operation.requestBody["x-switchyard-unknown-fields"]
        assert.oneOf(treatment, ["ignored", "refused"], id)
        assert.include(operation.requestBody.description, treatment === "ignored" ? "ignored" : "refused", id)
        const spec = valid[id]
        assert.isDefined(spec?.body, `a valid body of ${id}`)
        const params = id === "providerAdmin.update" ? { slug: managed.slug } : spec!.params ?? {}
        const query = new URLSearchParams(spec!.query ?? {}).toString()
        const target = `${fill(path, params)}${query === "" ? "" : `?${query}`}`
        const key = tenants.keys[credentialOf(spec!.audience)]
        const send = (body: unknown) => request(server.origin, { method: method.toUpperCase(), path: target, key, body })
        const schema = resolve(json.schema)!
        // Where to put the unknown field: the top, and each object-valued field of the body.
        const places: Array<{ readonly where: string; readonly schema: Json; readonly add: (body: Json) => Json }> = [
          { where: "(top)", schema, add: (body) => ({ ...body, [unknownField]: 1 }) }
        ]
        for (const [field, value] of Object.entries(spec!.body!(0) as Json)) {
          const inner = resolve(schema.properties?.[field])
          if (!isObject(value) || inner === undefined || typeof inner.additionalProperties !== "boolean") continue
          places.push({ where: field, schema: inner, add: (body) => ({ ...body, [field]: { ...body[field], [unknownField]: 1 } }) })
        }
        for (const place of places) {
          // A refusing route says so at every level, but for a body that is an open record its
          // handler decodes (a provider, decoded as the config file's): the route's word holds there.
          const refuses = place.schema.additionalProperties === false || (treatment === "refused" && place.schema.properties === undefined)
          if (treatment === "refused") assert.isTrue(refuses, `${id} ${place.where}: a refusing route says so at every level`)
          const before = await send(spec!.body!(++n))
          const after = await send(place.add(spec!.body!(++n) as Json))
          const what = `${method.toUpperCase()} ${path} (${id}), unknown field at ${place.where}: ${before.status} then ${after.status} ${after.text.slice(0, 300)}`
          if (refuses) {
            assert.strictEqual(after.status, 400, what)
            assert.include(after.text, unknownField, what)
          } else {
            assert.strictEqual(after.status, before.status, what)
            assert.notInclude(after.text, unknownField, what)
          }
          checked.push(`${id}:${place.where}`)
        }
      }
    }
    // Every JSON body of the API (the file upload is multipart), and the provider preferences inside the model calls.
    assert.isAtLeast(checked.length, 21, checked.join(", "))
    assert.include(checked, "createEmbeddings:provider")
  }, 120_000)
})
