import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

/**
 * The model-call endpoints answer every input as the contract's route does, whatever the path's
 * spelling: `POST /api/v1/embeddings` and `POST /api/v1/embeddings/` (and rerank's) get the same
 * status, content type and body for each input of the table, and the table's answers are the
 * contract's (security first, then the body's media type, then its JSON and schema, then the
 * handler).
 */
describe(`the model-call routes, one answer per input (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer()
  })
  afterAll(() => server.close())

  interface Input {
    readonly name: string
    /** `api`: the bootstrap standard key; `management`: the management key; a string: sent as it is. */
    readonly key?: "api" | "management" | "none" | string
    readonly contentType?: string | undefined
    readonly body?: string
    /** The status the contract gives it. */
    readonly status: number
  }

  const valid = {
    "/embeddings": JSON.stringify({ model: "no-such/model", input: "hello" }),
    "/rerank": JSON.stringify({ model: "no-such/model", query: "q", documents: ["a", "b"] })
  } as const

  const table = (path: keyof typeof valid): ReadonlyArray<Input> => [
    { name: "no key", key: "none", contentType: "application/json", body: valid[path], status: 401 },
    { name: "a malformed key", key: "not-a-key", contentType: "application/json", body: valid[path], status: 401 },
    { name: "a management key", key: "management", contentType: "application/json", body: valid[path], status: 403 },
    { name: "an unknown model", contentType: "application/json", body: valid[path], status: 404 },
    { name: "no content type", contentType: undefined, body: valid[path], status: 404 },
    { name: "JSON with a charset", contentType: "application/json; charset=utf-8", body: valid[path], status: 404 },
    { name: "JSON in capitals", contentType: "Application/JSON", body: valid[path], status: 404 },
    { name: "plain text", contentType: "text/plain", body: valid[path], status: 415 },
    { name: "a form", contentType: "application/x-www-form-urlencoded", body: "model=a&input=b", status: 415 },
    { name: "text that is not JSON", contentType: "application/json", body: "{not json", status: 400 },
    { name: "an empty body", contentType: "application/json", body: "", status: 400 },
    { name: "a body the schema refuses", contentType: "application/json", body: JSON.stringify({ model: 3 }), status: 400 },
    { name: "a JSON array", contentType: "application/json", body: "[]", status: 400 }
  ]

  const ask = async (path: string, input: Input) => {
    const key = input.key === undefined || input.key === "api"
      ? server.apiKey
      : input.key === "management"
      ? server.managementKey
      : input.key
    const headers: Record<string, string> = {}
    if (key !== "none") headers.authorization = `Bearer ${key}`
    if (input.contentType !== undefined) headers["content-type"] = input.contentType
    const response = await fetch(`${server.baseUrl}${path}`, {
      method: "POST",
      headers,
      // As bytes: a string body would get fetch's own `text/plain` content type.
      ...(input.body === undefined ? {} : { body: new TextEncoder().encode(input.body) })
    })
    return { status: response.status, contentType: response.headers.get("content-type"), body: await response.text() }
  }

  for (const path of ["/embeddings", "/rerank"] as const) {
    for (const input of table(path)) {
      it(`POST ${path}: ${input.name} answers ${input.status}, with or without a trailing slash`, async () => {
        const plain = await ask(path, input)
        const slashed = await ask(`${path}/`, input)
        assert.strictEqual(plain.status, input.status, plain.body)
        assert.deepStrictEqual(slashed, plain)
        if (input.status >= 400) {
          const body = JSON.parse(plain.body)
          assert.strictEqual(body.error.code, input.status, "in the contract's error envelope")
        }
      })
    }
  }
})
