import * as fc from "fast-check"
import { type Credential, tenantB, type Tenants, type ValidRequest } from "../support/Tenants.ts"

/**
 * What the fuzz suite sends: requests built from the served OpenAPI document (every operation,
 * with its valid request mutated, another method, hostile paths, queries and bodies, and every
 * kind of credential of two tenants), and raw HTTP no client library would form.
 */

/** One operation of the served document, with the valid request the tenants' table has for it. */
export interface Operation {
  readonly id: string
  readonly method: string
  readonly path: string
  readonly query: ReadonlyArray<string>
  readonly valid: ValidRequest
}

export interface ApiCase {
  readonly operation: Operation
  readonly method: string
  readonly path: string
  readonly credential: Credential
  readonly headers: Record<string, string>
  readonly body?: string | Buffer
  /** The case names a resource of tenant A with a credential of tenant B, or B's workspace with A's standard key. */
  readonly crossesWorkspaces: boolean
}

const credentials: ReadonlyArray<Credential> = [
  "none", "malformed", "unknown", "standardA", "managementA", "standardB", "managementScopedB", "managementUserB"
]

const hostileText = fc.constantFrom(
  "..", "%2e%2e", "%2F", "a%2Fb", "%00", "%", "%zz", ";", "x;y", "%3B", "x".repeat(3000), "00000000-0000-7000-8000-000000000000",
  "0".repeat(64), "'%20OR%201=1", "%F0%9F%98%80", "%E0%A4%A", "null", "-1", " ", "%20"
)

const nasty: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(
    null, -0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2, -1, "", "\u0000", "\ud800", "\u202e", "a".repeat(5000),
    [], {}, [[]], { "__proto__": { polluted: true } }, { constructor: { prototype: {} } }, "2999-13-45T99:99:99Z", "NaN", "1e999",
    "'; DROP TABLE api_keys; --"
  ),
  fc.integer({ min: 1, max: 80 }).map((depth) => {
    let value: unknown = 1
    for (let i = 0; i < depth; i++) value = [value]
    return value
  })
)

type Mutation = (value: Record<string, unknown>) => Record<string, unknown>

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.nat().map((i): Mutation => (v) => {
    const keys = Object.keys(v)
    const { [keys[i % Math.max(1, keys.length)] ?? ""]: _, ...rest } = v
    return rest
  }),
  fc.tuple(fc.nat(), nasty).map(([i, value]): Mutation => (v) => {
    const keys = Object.keys(v)
    return keys.length === 0 ? v : { ...v, [keys[i % keys.length]!]: value }
  }),
  fc.tuple(fc.string({ maxLength: 16 }), nasty).map(([key, value]): Mutation => (v) => ({ ...v, [key]: value }))
)

/** Bodies: the valid one, mutated, other JSON, broken JSON, bytes that are not text, nesting past the bound. */
const bodyOf = (valid: ValidRequest, n: number): fc.Arbitrary<string | Buffer | undefined> => {
  const base = (valid.body?.(n) ?? {}) as Record<string, unknown>
  return fc.oneof(
    { weight: 3, arbitrary: fc.constant(valid.body === undefined ? undefined : JSON.stringify(base)) },
    { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }).map((ms) => JSON.stringify(ms.reduce((v, m) => m(v), base))) },
    { weight: 2, arbitrary: nasty.map((v) => JSON.stringify(v) ?? "") },
    { weight: 1, arbitrary: fc.nat().map((cut) => JSON.stringify(base).slice(0, cut % (JSON.stringify(base).length + 1))) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 128 }).map((bytes) => Buffer.from(bytes)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<string | Buffer>(
        "",
        `\ufeff${JSON.stringify(base)}`,
        `${JSON.stringify(base)}garbage`,
        "[".repeat(5000) + "]".repeat(5000),
        `${"{\"a\":".repeat(2000)}1${"}".repeat(2000)}`,
        Buffer.from([0xc3, 0x28, 0xa0, 0xa1])
      )
    }
  ).map((body) => (typeof body === "string" ? body.replace(/"provision"/gu, "\"provisioned\"") : body))
}

const contentType = fc.oneof(
  { weight: 6, arbitrary: fc.constant("application/json") },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      "application/json; charset=utf-8", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x",
      "application/jsonx", "*/*", "", "application/vnd.api+json"
    )
  }
)

const otherMethods = ["GET", "POST", "PUT", "PATCH", "DELETE", "HEAD", "OPTIONS", "TRACE", "PROPFIND"] as const

// The path after its parameters are filled in, now and then made hostile: the router must not read
// it as another route (`;`), and a NUL, a traversal or a doubled slash is answered, not served.
const pathNoise = fc.constantFrom("", "", "", "", "/", ";x", "%00", "/..", "//", "/%2e%2e/health", "?", "#x", "/x")

/**
 * A request of one of `operations`, mutated. Path parameters are the valid ones, A's or B's
 * resources, or hostile text; the query the valid one with more pairs or hostile ones.
 */
export const apiCase = (operations: ReadonlyArray<Operation>, tenants: Tenants): fc.Arbitrary<ApiCase> =>
  fc.tuple(fc.constantFrom(...operations), fc.nat({ max: 1_000_000 })).chain(([operation, n]) => {
    const names = [...operation.path.matchAll(/\{([^}]+)\}/gu)].map((m) => m[1]!)
    const param = (name: string) =>
      fc.oneof(
        { weight: 5, arbitrary: fc.constant(operation.valid.params?.[name] ?? "x") },
        { weight: 2, arbitrary: fc.constantFrom(tenants.a.workspace, tenants.b.workspace, tenants.a.keyHash, tenants.a.intern, tenants.a.file) },
        { weight: 2, arbitrary: hostileText },
        { weight: 1, arbitrary: fc.string({ minLength: 1, maxLength: 40 }).map(encodeURIComponent) }
      )
    const params = fc.tuple(...names.map(param))
    const query = fc.oneof(
      { weight: 4, arbitrary: fc.constant(new URLSearchParams(operation.valid.query ?? {}).toString()) },
      {
        weight: 2,
        arbitrary: fc.array(
          fc.tuple(fc.constantFrom(...operation.query, "workspace_id", "limit", "offset", "x"), fc.oneof(hostileText, fc.constantFrom(tenants.a.workspace, tenants.b.workspace, "1", "true"))),
          { maxLength: 4 }
        ).map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"))
      }
    )
    const method = fc.oneof({ weight: 8, arbitrary: fc.constant(operation.method) }, { weight: 1, arbitrary: fc.constantFrom(...otherMethods) })
    return fc.record({
      params,
      query,
      method,
      noise: pathNoise,
      credential: fc.constantFrom(...credentials),
      contentType,
      body: bodyOf(operation.valid, n)
    }).map(({ body, contentType, credential, method, noise, params, query }): ApiCase => {
      let path = operation.path
      const filled: Record<string, string> = {}
      names.forEach((name, i) => {
        const value = params[i]!
        filled[name] = value
        // Valid and A's ids are URI-encoded; hostile text goes as it is.
        const raw = value === operation.valid.params?.[name] || /^[\w.-]+$/u.test(value) ? encodeURIComponent(value) : value
        path = path.replace(`{${name}}`, raw)
      })
      const full = `${path}${noise}${query === "" ? "" : `?${query}`}`
      const key = tenants.keys[credential]
      const aResources = new Set([tenants.a.workspace, tenants.a.keyHash, tenants.a.intern, tenants.a.byok, tenants.a.file, tenants.a.batch])
      // Only what the operation reads names a workspace: its own parameters that are resources of
      // a workspace, and its `workspace_id` query parameter when it has one.
      const workspaceQuery = operation.query.includes("workspace_id") ? new URLSearchParams(query).getAll("workspace_id") : []
      const owned = (operation.valid.ownedByA ?? []).map((name) => filled[name]!)
      const namesA = noise === "" && (owned.some((id) => aResources.has(id)) || workspaceQuery.includes(tenants.a.workspace))
      const namesB = noise === "" && (owned.includes(tenants.b.workspace) || workspaceQuery.includes(tenants.b.workspace))
      const crossesWorkspaces = (tenantB.includes(credential) && namesA) ||
        (credential === "standardA" && namesB)
      const headers: Record<string, string> = {
        ...(key === undefined ? {} : { authorization: `Bearer ${key}` }),
        ...(body === undefined || method === "HEAD" || method === "GET" ? {} : { "content-type": contentType })
      }
      if (headers["content-type"] === "") delete headers["content-type"]
      return {
        operation,
        method,
        path: full,
        credential,
        headers,
        ...(body === undefined || method === "HEAD" || method === "GET" ? {} : { body }),
        crossesWorkspaces
      }
    })
  })

/** A raw exchange: the bytes sent (in parts, with pauses), and whether an answer must come. */
export interface RawCase {
  readonly name: string
  readonly parts: ReadonlyArray<{ readonly bytes: string | Buffer; readonly delayMs: number }>
  /** The client closes the connection after its last part, before any answer: none is expected. */
  readonly closesEarly: boolean
}

/** Raw HTTP/1.1: malformed chunking, conflicting framing, slow and cut-off bodies, CONNECT, garbage. */
export const rawCase = (tenants: Tenants, host: string): fc.Arbitrary<RawCase> => {
  const key = fc.constantFrom(...credentials).map((c) => tenants.keys[c])
  const auth = (k: string | undefined) => (k === undefined ? "" : `Authorization: Bearer ${k}\r\n`)
  const route = fc.constantFrom("/api/v1/embeddings", "/api/v1/rerank", "/api/v1/keys", "/api/v1/interns", "/api/v1/workspaces", "/api/v2/rerank", "/api/v1/files")
  const valid = JSON.stringify({ model: "switchyard/local-embed", input: ["hello", "world"], dimensions: 8 })
  const chunkSize = fc.constantFrom("zz", "-1", "ffffffffffffffffffff", "", " 2", "2;ext=1", "0x2", "1\n", "7fffffff")
  const once = (name: string, bytes: string | Buffer, closesEarly = false): RawCase => ({ name, parts: [{ bytes, delayMs: 0 }], closesEarly })
  return fc.oneof(
    fc.tuple(route, key, chunkSize, fc.boolean()).map(([path, k, size, close]) =>
      once(
        `malformed chunk size ${JSON.stringify(size)} on ${path}`,
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth(k)}Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n` +
          `${close ? "Connection: close\r\n" : ""}\r\n${size}\r\n{}\r\n0\r\n\r\n`
      )
    ),
    fc.tuple(route, key).map(([path, k]) =>
      once(
        `Content-Length and Transfer-Encoding both on ${path}`,
        `POST ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth(k)}Content-Type: application/json\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n`
      )
    ),
    fc.tuple(route, key, fc.integer({ min: 2, max: 4 }), fc.integer({ min: 10, max: 120 })).map(([path, k, pieces, pause]): RawCase => {
      const size = Math.ceil(valid.length / pieces)
      const chunks = Array.from({ length: pieces }, (_, i) => valid.slice(i * size, (i + 1) * size))
      return {
        name: `a body in ${pieces} pieces ${pause} ms apart on ${path}`,
        parts: [
          { bytes: `POST ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth(k)}Content-Type: application/json\r\nContent-Length: ${valid.length}\r\nConnection: close\r\n\r\n`, delayMs: 0 },
          ...chunks.map((bytes) => ({ bytes, delayMs: pause }))
        ],
        closesEarly: false
      }
    }),
    fc.tuple(route, key, fc.boolean(), fc.integer({ min: 0, max: 80 })).map(([path, k, chunked, pause]): RawCase => ({
      name: `the client goes away mid-body (${chunked ? "chunked" : "declared"}) on ${path}`,
      parts: [
        {
          bytes: `POST ${path} HTTP/1.1\r\nHost: ${host}\r\n${auth(k)}Content-Type: application/json\r\n` +
            `${chunked ? "Transfer-Encoding: chunked\r\n\r\n40\r\n{\"model\":\"switchyard/local-embed\"," : `Content-Length: 4000000\r\n\r\n{"model":"switchyard/local-embed",`}`,
          delayMs: 0
        },
        { bytes: "\"input\":[\"a", delayMs: pause }
      ],
      closesEarly: true
    })),
    fc.constantFrom(
      once("CONNECT", `CONNECT ${host} HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      once("CONNECT to elsewhere", "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n"),
      once("not HTTP", "GARBAGE\r\n\r\n"),
      once("HTTP/9.9", `GET /api/v1/health HTTP/9.9\r\nHost: ${host}\r\n\r\n`),
      once("a header without a colon", `GET /api/v1/health HTTP/1.1\r\nHost: ${host}\r\nnocolon\r\n\r\n`),
      once("an unknown method token", `FROB /api/v1/health HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      once("two Content-Lengths that disagree", `POST /api/v1/keys HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`),
      once("a header over the size limit", `GET /api/v1/health HTTP/1.1\r\nHost: ${host}\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`),
      once("absolute-form target", `GET http://${host}/api/v1/health HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      once("asterisk-form OPTIONS", `OPTIONS * HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      once("two requests pipelined", `GET /api/v1/health HTTP/1.1\r\nHost: ${host}\r\n\r\nGET /api/v1/models HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`),
      once("a path cut by the router", `GET /api/v1/models/;/x/endpoints HTTP/1.1\r\nHost: ${host}\r\n\r\n`),
      once("HTTP/1.0 without Host", "GET /api/v1/health HTTP/1.0\r\n\r\n"),
      once("a NUL in the target", `GET /api/v1/health%00 HTTP/1.1\r\nHost: ${host}\r\n\r\n`)
    )
  )
}
