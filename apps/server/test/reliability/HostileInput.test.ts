import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { tempDir } from "../support/TestServer.ts"
import { dataDirWithStore, type GatewayProcess, type Memory, startGatewayProcess } from "./GatewayProcess.ts"
import { type Answer, type Failure, isAnswer, postJson, send, sendBytes } from "./RawHttp.ts"
import { level, record, size, sleep } from "./Reliability.ts"

const maxBodyBytes = 64 * 1024
const internBodyBytes = 1_048_576
const bodyTimeoutMs = 1500
const regionalHost = "eu.switchyard.test"

type Kind = "standard" | "management" | "none"

interface Target {
  readonly name: string
  readonly method: string
  /** The path under /api/v1; `{id}` is replaced by the generated path parameter. */
  readonly path: string
  readonly key: Kind
  readonly body?: () => unknown
  readonly query?: ReadonlyArray<string>
  /** A real id for the path parameter, besides generated ones; never for operations that destroy or start things. */
  readonly realId?: () => string
}

const apiKey = KeySecret.generate()
const managementKey = KeySecret.generate()
const ids = { intern: "", keyHash: "", byok: "" }

const embeddingBody = () => ({
  model: "acme/embed",
  input: ["hostile input", "second"],
  encoding_format: "float",
  provider: { order: ["alpha"], allow_fallbacks: true, sort: "price", max_price: { prompt: "1" } },
  session_id: "s-1",
  trace: { trace_id: "t", custom: { a: 1 } },
  user: "u"
})

const targets: ReadonlyArray<Target> = [
  { name: "health", method: "GET", path: "/health", key: "none" },
  { name: "openapi", method: "GET", path: "/openapi.json", key: "none" },
  { name: "keys.list", method: "GET", path: "/keys", key: "management", query: ["include_disabled", "offset", "workspace_id"] },
  {
    name: "keys.create",
    method: "POST",
    path: "/keys",
    key: "management",
    body: () => ({ name: "fuzz", limit: 1.5, limit_reset: "daily", include_byok_in_limit: true, expires_at: "2999-01-01T00:00:00Z", external: { user: "x" } })
  },
  { name: "keys.current", method: "GET", path: "/key", key: "standard" },
  { name: "keys.get", method: "GET", path: "/keys/{id}", key: "management", realId: () => ids.keyHash },
  {
    name: "keys.update",
    method: "PATCH",
    path: "/keys/{id}",
    key: "management",
    body: () => ({ name: "renamed", disabled: false, limit: null, limit_reset: "weekly", expires_at: null }),
    realId: () => ids.keyHash
  },
  { name: "keys.delete", method: "DELETE", path: "/keys/{id}", key: "management" },
  {
    name: "interns.create",
    method: "POST",
    path: "/interns",
    key: "standard",
    body: () => ({ name: "fuzzer", description: "d", instructions: "i", model: "openai/gpt-4o" })
  },
  { name: "interns.list", method: "GET", path: "/interns", key: "standard", query: ["limit", "starting_after", "status", "workspace_id"] },
  { name: "interns.get", method: "GET", path: "/interns/{id}", key: "standard", realId: () => ids.intern },
  {
    name: "interns.update",
    method: "PATCH",
    path: "/interns/{id}",
    key: "standard",
    body: () => ({ name: "hostile", description: "d", instructions: "i", model: "openai/gpt-4o" }),
    realId: () => ids.intern
  },
  { name: "interns.delete", method: "DELETE", path: "/interns/{id}", key: "standard", body: () => ({ acknowledge_workspace_loss: true }) },
  { name: "interns.provision", method: "POST", path: "/interns/{id}/provision", key: "standard" },
  { name: "interns.suspend", method: "POST", path: "/interns/{id}/suspend", key: "standard", realId: () => ids.intern },
  { name: "credits.get", method: "GET", path: "/credits", key: "management", query: ["workspace_id"] },
  { name: "credits.add", method: "POST", path: "/credits", key: "management", body: () => ({ amount: 0.5, note: "fuzz" }) },
  { name: "byok.list", method: "GET", path: "/byok", key: "management", query: ["provider", "offset", "limit", "workspace_id"] },
  { name: "byok.create", method: "POST", path: "/byok", key: "management", body: () => ({ provider: "zeta", key: "sk-fuzz-0123456789abcdef", name: "n" }) },
  { name: "byok.get", method: "GET", path: "/byok/{id}", key: "management", realId: () => ids.byok },
  {
    name: "byok.update",
    method: "PATCH",
    path: "/byok/{id}",
    key: "management",
    body: () => ({ name: "m", disabled: false }),
    realId: () => ids.byok
  },
  { name: "byok.delete", method: "DELETE", path: "/byok/{id}", key: "management" },
  { name: "embeddings.create", method: "POST", path: "/embeddings", key: "standard", body: embeddingBody },
  { name: "embeddings.plan", method: "POST", path: "/embeddings/plan", key: "standard", body: embeddingBody },
  { name: "embeddings.models", method: "GET", path: "/embeddings/models", key: "standard", query: ["limit", "offset"] },
  { name: "models.list", method: "GET", path: "/models", key: "standard", query: ["limit", "offset", "output_modalities"] },
  { name: "models.count", method: "GET", path: "/models/count", key: "standard", query: ["output_modalities"] },
  { name: "models.user", method: "GET", path: "/models/user", key: "standard", query: ["limit", "offset", "output_modalities"] },
  { name: "models.get", method: "GET", path: "/models/{id}", key: "standard" },
  { name: "unknown route", method: "POST", path: "/{id}", key: "standard", body: () => ({}) }
]

const keyOf = (kind: Kind) => (kind === "standard" ? apiKey : kind === "management" ? managementKey : undefined)

const isInternPath = (path: string) => /^\/api\/v1\/interns(\/|$|\?)/u.test(path)

// Anything that reaches a handler must come back as a 2xx JSON body or the spec's envelope; a
// status of 500 or more is a failure whatever the input was.
const violation = (path: string, reply: Answer | Failure): string | undefined => {
  if (!isAnswer(reply)) return `no answer: ${reply.error}`
  if (reply.status >= 500) return `status ${reply.status}: ${reply.text.slice(0, 300)}`
  if (reply.status < 400) return reply.json === undefined && reply.text !== "" ? `a ${reply.status} that is not JSON` : undefined
  const error = reply.json?.error
  if (typeof error !== "object" || error === null) return `a ${reply.status} without the envelope: ${reply.text.slice(0, 300)}`
  if (typeof error.message !== "string" || error.message.length === 0) return `a ${reply.status} without a message`
  const codeOk = isInternPath(path) ? error.code === reply.status || typeof error.code === "string" : error.code === reply.status
  if (!codeOk) return `a ${reply.status} whose code is ${JSON.stringify(error.code)}`
  return undefined
}

const deep = (depth: number, leaf: unknown): unknown => {
  let value = leaf
  for (let i = 0; i < depth; i++) value = [value]
  return value
}

const nasty = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom<unknown>(
    null, -0, 1e308, -1e308, 5e-324, Number.MAX_SAFE_INTEGER + 2, 0.1, -1, "", " ", "\u0000", "\ud800", "\u202e",
    "a".repeat(5000), "😀".repeat(300), [], {}, [[]], { "__proto__": { polluted: true } }, { constructor: { prototype: {} } },
    "2999-13-45T99:99:99Z", "NaN", "Infinity", "true", "null", "0x10", "1e999", "../../etc/passwd", "'; DROP TABLE api_keys; --"
  ),
  fc.integer({ min: 1, max: 40 }).map((d) => deep(d, 1)),
  fc.string({ unit: "binary", maxLength: 64 })
)

type Mutation = (value: Record<string, unknown>) => Record<string, unknown>

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.string({ maxLength: 12 }).map((key): Mutation => (v) => {
    const keys = Object.keys(v)
    const { [keys[key.length % Math.max(1, keys.length)] ?? key]: _, ...rest } = v
    return rest
  }),
  fc.tuple(fc.nat(), nasty).map(([i, value]): Mutation => (v) => {
    const keys = Object.keys(v)
    return keys.length === 0 ? v : { ...v, [keys[i % keys.length]!]: value }
  }),
  fc.tuple(fc.string({ maxLength: 20 }), nasty).map(([key, value]): Mutation => (v) => ({ ...v, [key]: value })),
  fc.tuple(fc.nat(), fc.nat(), nasty).map(([i, j, value]): Mutation => (v) => {
    const keys = Object.keys(v)
    const key = keys[i % Math.max(1, keys.length)]
    const inner = key === undefined ? undefined : v[key]
    if (typeof inner !== "object" || inner === null || Array.isArray(inner)) return v
    const innerKeys = Object.keys(inner)
    if (innerKeys.length === 0) return v
    return { ...v, [key!]: { ...inner, [innerKeys[j % innerKeys.length]!]: value } }
  })
)

const bodyText = (valid: () => unknown): fc.Arbitrary<string | Buffer> =>
  fc.oneof(
    { weight: 4, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 4 }).map((ms) => JSON.stringify(ms.reduce((v, m) => m(v), valid() as Record<string, unknown>))) },
    { weight: 2, arbitrary: nasty.map((v) => JSON.stringify(v) ?? "") },
    {
      weight: 1,
      arbitrary: fc.nat().map((n) => {
        const text = JSON.stringify(valid())
        return text.slice(0, n % (text.length + 1))
      })
    },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 256 }).map((bytes) => Buffer.from(bytes)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom<string | Buffer>(
        "",
        `\ufeff${JSON.stringify(valid())}`,
        `${JSON.stringify(valid())}garbage`,
        JSON.stringify(valid()) + JSON.stringify(valid()),
        "[".repeat(20_000) + "]".repeat(20_000),
        `${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}`,
        Buffer.from([0xc3, 0x28, 0xa0, 0xa1, 0xe2, 0x28, 0xa1]),
        JSON.stringify({ ...(valid() as object), extra: "x".repeat(maxBodyBytes - 200) })
      )
    }
  )

const headerValue = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)), maxLength: 300 })

const hostileHeaders: fc.Arbitrary<Record<string, string>> = fc.record({
  "content-type": fc.oneof(
    fc.constantFrom(
      "application/json", "application/json; charset=utf-8", "application/json; charset=utf-16", "text/plain",
      "application/x-www-form-urlencoded", "multipart/form-data; boundary=xyz", "application/jsonx", "*/*", ""
    ),
    headerValue
  ),
  "x-session-id": headerValue,
  "x-switchyard-seed": fc.oneof(headerValue, fc.constantFrom("-1", "4294967296", "1e3", "00000000001", "0x10", " 7 ")),
  "x-switchyard-explain": fc.oneof(headerValue, fc.constantFrom("true", "1", "yes", "TRUE")),
  accept: fc.oneof(headerValue, fc.constantFrom("text/event-stream", "application/xml", "*/*")),
  "accept-encoding": fc.constantFrom("gzip", "br", "identity;q=0", "*"),
  "content-encoding": fc.constantFrom("gzip", "deflate", "br", "identity", "x-unknown"),
  "x-forwarded-for": headerValue,
  host: fc.oneof(fc.constantFrom(regionalHost, `${regionalHost}:443`, "EU.SWITCHYARD.TEST.", "localhost", "[::1]"), headerValue),
  cookie: headerValue
}, { requiredKeys: [] })

const authorization = (kind: Kind): fc.Arbitrary<string | undefined> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.constant(keyOf(kind) === undefined ? undefined : `Bearer ${keyOf(kind)}`) },
    {
      weight: 1,
      arbitrary: fc.oneof(
        headerValue,
        headerValue.map((v) => `Bearer ${v}`),
        fc.constantFrom(
          "Bearer", "Bearer ", `bearer ${apiKey}`, "Basic dXNlcjpwYXNz", `Bearer  ${apiKey}`, `Bearer ${apiKey} extra`,
          `Bearer ${apiKey.slice(0, -1)}`, `Bearer ${`sk-sy-v1-${"g".repeat(64)}`}`, `Bearer ${"x".repeat(8000)}`
        )
      )
    }
  )

const queryValue = fc.oneof(
  fc.string({ maxLength: 40 }).map(encodeURIComponent),
  fc.constantFrom("%", "%zz", "%E0%A4%A", "%00", "+", "-1", "1e3", "99999999999999999999", "true", "maybe", "0", "1.5", "[]", "a&b=c", "%26")
)

const queryString = (names: ReadonlyArray<string>) =>
  fc.array(fc.tuple(fc.oneof(fc.constantFrom(...names, "status", "offset"), fc.string({ maxLength: 10 }).map(encodeURIComponent)), queryValue), { maxLength: 6 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join("&"))

const pathParam = (realId: (() => string) | undefined) =>
  fc.oneof(
    { weight: 3, arbitrary: fc.string({ minLength: 1, maxLength: 60 }).map(encodeURIComponent) },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        "..", "%2e%2e", "%2F", "a%2Fb", "%00", "%", "%zz", "x".repeat(5000), "00000000-0000-7000-8000-000000000000",
        "0".repeat(64), "f".repeat(63), "'%20OR%201=1", "%F0%9F%98%80"
      )
    },
    { weight: realId === undefined ? 0 : 1, arbitrary: fc.constant("<real>") }
  ).map((p) => (p === "<real>" ? realId!() : p))

describe("reliability: hostile input", () => {
  let upstream: FakeUpstream.FakeServer
  let gateway: GatewayProcess
  let baseline: Memory
  let inputsTried = 0
  let requests = 0
  const failures: Array<string> = []

  const call = async (
    target: Target,
    options: { readonly path: string; readonly headers: Record<string, string>; readonly body?: string | Buffer }
  ): Promise<string | undefined> => {
    requests += 1
    const reply = await send(gateway.origin, {
      method: target.method,
      path: `/api/v1${options.path}`,
      headers: options.headers,
      ...(options.body !== undefined ? { body: options.body } : {}),
      timeoutMs: 20_000
    })
    if (!isAnswer(reply) && reply.error.startsWith("not sent")) return undefined
    inputsTried += 1
    const problem = violation(`/api/v1${options.path}`, reply)
    if (problem === undefined) return undefined
    const described = `${target.name} ${target.method} ${options.path.slice(0, 200)} ${JSON.stringify(options.headers).slice(0, 300)} ` +
      `body ${String(options.body).slice(0, 200)}: ${problem}`
    failures.push(described)
    return described
  }

  const baseHeaders = (target: Target): Record<string, string> => ({
    ...(keyOf(target.key) !== undefined ? { authorization: `Bearer ${keyOf(target.key)}` } : {}),
    ...(target.body !== undefined ? { "content-type": "application/json" } : {})
  })

  const pathOf = (target: Target, id = "x") => target.path.replace("{id}", id)
  const idOf = (target: Target) => (target.realId === undefined ? "x" : target.realId())

  const expectUp = async () => {
    assert.isTrue(gateway.isRunning(), gateway.output().slice(-3000))
    const health = await send(gateway.origin, { method: "GET", path: "/api/v1/health" })
    assert.strictEqual(health.status, 200)
  }

  const json = async (method: string, path: string, key: string, body?: unknown) => {
    const reply = await send(gateway.origin, {
      method,
      path: `/api/v1${path}`,
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    if (!isAnswer(reply) || reply.status >= 300) throw new Error(`${method} ${path}: ${JSON.stringify(reply).slice(0, 500)}`)
    return reply.json
  }

  beforeAll(async () => {
    upstream = await FakeOpenAi.start()
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed", supported_parameters: ["dimensions", "encoding_format", "user"] })])]
    }))
    gateway = await startGatewayProcess({
      SWITCHYARD_DATA_DIR: dataDirWithStore(),
      DATABASE_URL: "",
      SWITCHYARD_CONFIG: configPath,
      ALPHA_API_KEY: "sk-fake",
      SWITCHYARD_BOOTSTRAP_API_KEY: apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: managementKey,
      SWITCHYARD_RATE_LIMIT: "off",
      SWITCHYARD_MAX_BODY_BYTES: String(maxBodyBytes),
      SWITCHYARD_BODY_TIMEOUT_MS: String(bodyTimeoutMs),
      SWITCHYARD_REGIONAL_HOSTS: regionalHost
    })
    await json("POST", "/credits", managementKey, { amount: 100 })
    ids.intern = (await json("POST", "/interns", apiKey, { name: "target" })).id
    ids.keyHash = (await json("POST", "/keys", managementKey, { name: "target" })).data.hash
    ids.byok = (await json("POST", "/byok", managementKey, { provider: "beta", key: "sk-target-0123456789abcdef" })).data.id
    for (let i = 0; i < 3; i++) {
      for (const target of targets) {
        await call(target, {
          path: pathOf(target, target.realId === undefined ? "warm-up" : target.realId()),
          headers: baseHeaders(target),
          ...(target.body !== undefined ? { body: JSON.stringify(target.body()) } : {})
        })
      }
    }
    baseline = await gateway.memory()
  }, 120_000)

  afterAll(async () => {
    record("hostile-input", { inputsTried, requests, leaksFound: 0 })
    await gateway?.stop()
    await upstream?.close()
  })

  const runs = size.hostileRuns
  const timeout = level === "full" ? 3_600_000 : 120_000

  const fuzz = async (perTarget: (target: Target) => fc.IAsyncProperty<any> | undefined) => {
    const groups = [targets.filter((_, i) => i % 2 === 0), targets.filter((_, i) => i % 2 === 1)]
    await Promise.all(groups.map(async (group) => {
      for (const target of group) {
        const property = perTarget(target)
        if (property !== undefined) await fc.assert(property, { numRuns: runs })
      }
    }))
    assert.deepStrictEqual(failures.slice(0, 20), [], `${failures.length} violations`)
    await expectUp()
  }

  it("generated and mutated bodies get a 2xx or a 4xx envelope, never a 5xx", async () => {
    await fuzz((target) => {
      if (target.body === undefined) return undefined
      return fc.asyncProperty(bodyText(target.body), async (body) => {
        const text = target.name === "interns.create" && typeof body === "string" ? body.replace(/"provision"/gu, "\"provisioned\"") : body
        assert.isUndefined(await call(target, { path: pathOf(target, idOf(target)), headers: baseHeaders(target), body: text }))
      })
    })
  }, timeout)

  it("hostile headers get a 2xx or a 4xx envelope, never a 5xx", async () => {
    await fuzz((target) =>
      fc.asyncProperty(hostileHeaders, authorization(target.key), async (headers, auth) => {
        const all: Record<string, string> = { ...baseHeaders(target), ...headers }
        if (auth === undefined) delete all.authorization
        else all.authorization = auth
        const body = target.body === undefined ? undefined : JSON.stringify(target.body())
        if (body === undefined) delete all["content-type"]
        assert.isUndefined(await call(target, { path: pathOf(target, idOf(target)), headers: all, ...(body !== undefined ? { body } : {}) }))
      })
    )
  }, timeout)

  it("hostile query strings and path parameters get a 2xx or a 4xx envelope, never a 5xx", async () => {
    await fuzz((target) =>
      fc.asyncProperty(queryString(target.query ?? ["limit", "offset"]), pathParam(target.realId), async (query, id) => {
        const body = target.body === undefined ? undefined : JSON.stringify(target.body())
        assert.isUndefined(await call(target, { path: `${pathOf(target, id)}?${query}`, headers: baseHeaders(target), ...(body !== undefined ? { body } : {}) }))
      })
    )
  }, timeout)

  it("oversized bodies get 413 in the envelope, declared or streamed, without reading them whole", async () => {
    for (const target of targets.filter((t) => t.body !== undefined && t.name !== "unknown route")) {
      const limit = isInternPath(`/api/v1${target.path}`) ? internBodyBytes : maxBodyBytes
      const path = `/api/v1${pathOf(target, idOf(target))}`
      const declared = await send(gateway.origin, {
        method: target.method,
        path,
        headers: { ...baseHeaders(target), "content-length": String(limit * 64) },
        chunks: [{ data: "{", delayMs: 0 }],
        timeoutMs: 10_000
      })
      inputsTried += 1
      assert.strictEqual(declared.status, 413, `${target.name} declared: ${JSON.stringify(declared).slice(0, 300)}`)
      assert.isUndefined(violation(path, declared), target.name)
      const piece = Buffer.alloc(64 * 1024, " ")
      const streamed = await send(gateway.origin, {
        method: target.method,
        path,
        headers: { ...baseHeaders(target), "transfer-encoding": "chunked" },
        chunks: [{ data: "{\"name\":\"", delayMs: 0 }, ...Array.from({ length: Math.ceil(limit / piece.length) + 2 }, () => ({ data: piece, delayMs: 0 }))],
        timeoutMs: 20_000
      })
      inputsTried += 1
      assert.strictEqual(streamed.status, 413, `${target.name} streamed: ${JSON.stringify(streamed).slice(0, 300)}`)
      assert.isUndefined(violation(path, streamed), target.name)
      if (isInternPath(path)) assert.strictEqual((streamed as Answer).json.error.code, "payload_too_large")
    }
    await expectUp()
  }, 120_000)

  it("slow-drip and stalled bodies get a 408 envelope at the body time limit while other callers are served", async () => {
    const drips = targets.filter((t) => t.body !== undefined && t.name !== "unknown route").map((target) => {
      const body = JSON.stringify(target.body!())
      const path = `/api/v1${pathOf(target, idOf(target))}`
      return send(gateway.origin, {
        method: target.method,
        path,
        headers: { ...baseHeaders(target), "content-length": String(Buffer.byteLength(body)) },
        chunks: [...body].map((c) => ({ data: c, delayMs: 150 })),
        timeoutMs: bodyTimeoutMs + 5000
      }).then((reply) => ({ target, path, reply }))
    })
    const stalled = send(gateway.origin, {
      method: "POST",
      path: "/api/v1/embeddings",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "content-length": "500" },
      chunks: [{ data: "{\"model\":", delayMs: 0 }],
      timeoutMs: bodyTimeoutMs + 5000
    })
    const served: Array<number> = []
    const started = Date.now()
    while (Date.now() - started < bodyTimeoutMs) {
      const t0 = Date.now()
      const reply = await postJson(gateway.origin, "/api/v1/embeddings", apiKey, { model: "acme/embed", input: "while others drip" })
      assert.strictEqual(reply.status, 200)
      served.push(Date.now() - t0)
    }
    for (const { target, path, reply } of await Promise.all(drips)) {
      inputsTried += 1
      assert.strictEqual(reply.status, 408, `${target.name}: ${JSON.stringify(reply).slice(0, 300)}`)
      assert.isUndefined(violation(path, reply), target.name)
      if (level === "full") assert.isBelow(reply.ms, bodyTimeoutMs + 1500, target.name)
    }
    const stall = await stalled
    inputsTried += 1
    assert.strictEqual(stall.status, 408, JSON.stringify(stall).slice(0, 300))
    assert.isAbove(served.length, 3)
    assert.isBelow(Math.max(...served), 1000)
    const fast = JSON.stringify({ model: "acme/embed", input: "quick enough" })
    const within = await send(gateway.origin, {
      method: "POST",
      path: "/api/v1/embeddings",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json", "content-length": String(fast.length) },
      chunks: [fast.slice(0, 10), fast.slice(10, 20), fast.slice(20)].map((data) => ({ data, delayMs: 200 }))
    })
    assert.strictEqual(within.status, 200)
    await expectUp()
  }, 60_000)

  it("requests that are not HTTP get a 4xx or a closed connection, and the server stays up", async () => {
    const garbage = [
      "GARBAGE\r\n\r\n",
      "\x00\x01\x02\x03\r\n\r\n",
      "GET /api/v1/health HTTP/9.9\r\nHost: x\r\n\r\n",
      "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
      "POST /api/v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n",
      "POST /api/v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
      "POST /api/v1/embeddings HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
      `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`,
      `GET /${"a".repeat(100_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      "GET /api/v1/health HTTP/1.1\r\nHost: x\r\n folded: continuation\r\n\r\n",
      "GET /api/v1/health HTTP/1.1\r\nHo st: x\r\n\r\n",
      "GET /api/v1/health\r\n\r\n",
      "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n",
      `POST /api/v1/embeddings HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${apiKey}\r\nContent-Type: application/json\r\nContent-Length: 10\r\n\r\n{"model":"acme/embed"}GET / HTTP/1.1\r\n\r\n`
    ]
    for (const bytes of garbage) {
      const answer = await sendBytes(gateway.origin, bytes, 5000)
      inputsTried += 1
      if (answer.status !== undefined) assert.isBelow(answer.status, 500, `${JSON.stringify(bytes.slice(0, 80))}: ${answer.raw.slice(0, 200)}`)
    }
    await expectUp()
  }, 120_000)

  it.skipIf(level !== "full")("memory returns to its baseline after everything above", async () => {
    await sleep(500)
    const after = await gateway.memory()
    const grownMb = (after.heapUsed - baseline.heapUsed) / 1_048_576
    assert.isBelow(grownMb, 24, `heap grew from ${Math.round(baseline.heapUsed / 1_048_576)} MB to ${Math.round(after.heapUsed / 1_048_576)} MB`)
    await expectUp()
  }, 60_000)
})
