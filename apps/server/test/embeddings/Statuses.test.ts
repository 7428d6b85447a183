import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Http from "node:http"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, type Gateway, provider, type Reply, startGateway } from "./Gateway.ts"

const maxBodyBytes = 4096
const requestTimeoutMs = 1000

const expectEnvelope = (reply: Reply, status: number) => {
  assert.strictEqual(reply.status, status, reply.text)
  assert.strictEqual(reply.headers.get("content-type")?.split(";")[0], "application/json")
  assert.strictEqual(reply.json.error.code, status)
  assert.isString(reply.json.error.message)
  assert.isAbove(reply.json.error.message.length, 0)
}

// Sends a body in chunks without Content-Length (Transfer-Encoding: chunked).
const chunkedPost = (url: string, key: string, chunks: ReadonlyArray<string>) =>
  new Promise<{ readonly status: number; readonly json: any }>((resolve, reject) => {
    const req = Http.request(url, {
      method: "POST",
      headers: { authorization: `Bearer ${key}`, "content-type": "application/json", "transfer-encoding": "chunked" }
    }, (res) => {
      const parts: Array<Buffer> = []
      res.on("data", (c: Buffer) => parts.push(c))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(parts).toString("utf8")) }))
    })
    req.on("error", reject)
    const write = (i: number) => {
      if (i === chunks.length) return req.end()
      req.write(chunks[i], () => setTimeout(() => write(i + 1), 5))
    }
    write(0)
  })

describe("embeddings statuses", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let bravo: FakeUpstream.FakeServer
  let stuck: FakeUpstream.FakeServer

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    bravo = await FakeOpenAi.start()
    stuck = await FakeOpenAi.start()
    stuck.setBehaviour({ _tag: "Hang" })
    gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", alpha.url, {}, [
            endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } }),
            endpoint("acme/pricey", { upstream_model: "embed", pricing: { prompt: "1000000" } })
          ]),
          provider("bravo", bravo.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.2" } })]),
          provider("stall", stuck.url, { timeout_ms: 30_000 }, [endpoint("acme/stall")]),
          provider("lag", stuck.url, { timeout_ms: 200 }, [endpoint("acme/lag")])
        ]
      },
      env: {
        SWITCHYARD_REQUEST_TIMEOUT_MS: String(requestTimeoutMs),
        SWITCHYARD_MAX_BODY_BYTES: String(maxBodyBytes)
      },
      credits: 1
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all([alpha.close(), bravo.close(), stuck.close()])
  })
  afterEach(() => {
    alpha.setBehaviour(FakeUpstream.normal)
    bravo.setBehaviour(FakeUpstream.normal)
  })

  const alphaOnly = { order: ["alpha"], allow_fallbacks: false }
  const upstreamAnswers = async (behaviour: FakeUpstream.Behaviour) => {
    alpha.setBehaviour(behaviour)
    return gateway.embed({ model: "acme/embed", input: "x", provider: alphaOnly })
  }

  it("400: a body that breaks the schema names every field and rule", async () => {
    const reply = await gateway.embed({
      model: 5,
      input: [],
      dimensions: 0,
      encoding_format: "hex",
      provider: { sort: "cheapest", max_prise: {} },
      session_id: "s".repeat(257)
    })
    expectEnvelope(reply, 400)
    const paths = reply.json.error.metadata.issues.map((i: any) => i.path)
    for (const path of ["model", "input", "dimensions", "encoding_format", "provider.sort", "provider.max_prise", "session_id"]) {
      assert.include(paths, path)
      assert.include(reply.json.error.message, `${path}: `)
    }
    assert.include(reply.json.error.message, "at most 256")

    const itemized = await gateway.embed({ model: "acme/embed", input: ["ok", "", "fine"] })
    expectEnvelope(itemized, 400)
    assert.deepStrictEqual(itemized.json.error.metadata.issues, [{ path: "input[1]", message: "Expected a value with a length of at least 1" }])

    const malformed = await gateway.embed("{\"model\": ")
    expectEnvelope(malformed, 400)
    assert.include(malformed.json.error.message, "JSON")
  })

  it("400: an x-session-id over 256 characters, and an upstream refusal of the request itself", async () => {
    const session = await gateway.embed({ model: "acme/embed", input: "x" }, { headers: { "x-session-id": "s".repeat(257) } })
    expectEnvelope(session, 400)
    assert.include(session.json.error.message, "x-session-id")

    const before = bravo.requests.length
    alpha.setBehaviour({ _tag: "Status", status: 400, body: JSON.stringify({ error: { message: "'input' is invalid", type: "invalid_request_error" } }) })
    const refused = await gateway.embed({ model: "acme/embed", input: "x", provider: { order: ["alpha", "bravo"] } })
    expectEnvelope(refused, 400)
    assert.strictEqual(refused.json.error.metadata.reason, "InvalidRequest")
    assert.strictEqual(refused.json.error.metadata.raw, "'input' is invalid")
    assert.strictEqual(bravo.requests.length, before)
  })

  it("401: no key or an unknown key", async () => {
    const missing = await gateway.embed({ model: "acme/embed", input: "x" }, { key: "" })
    expectEnvelope(missing, 401)
    const unknown = await gateway.embed({ model: "acme/embed", input: "x" }, { key: `sk-sy-v1-${"0".repeat(64)}` })
    expectEnvelope(unknown, 401)
  })

  it("402: the workspace cannot pay the request's worst case, and nothing is sent upstream", async () => {
    const before = alpha.requests.length
    const reply = await gateway.embed({ model: "acme/pricey", input: "five words of text here" })
    expectEnvelope(reply, 402)
    assert.strictEqual(reply.json.error.metadata.reason, "workspace_credits")
    assert.strictEqual(alpha.requests.length, before)
  })

  it("403: a management key calling the model endpoint", async () => {
    const reply = await gateway.embed({ model: "acme/embed", input: "x" }, { key: gateway.server.managementKey })
    expectEnvelope(reply, 403)
    assert.strictEqual(reply.json.error.metadata.key_kind, "management")
  })

  it("404: an unknown model, and a model no allowed provider serves", async () => {
    const unknown = await gateway.embed({ model: "acme/nothing", input: "x" })
    expectEnvelope(unknown, 404)
    assert.strictEqual(unknown.json.error.metadata.model, "acme/nothing")

    const excluded = await gateway.embed({ model: "acme/embed", input: "x", provider: { only: ["nobody"] } })
    expectEnvelope(excluded, 404)
    assert.deepStrictEqual(excluded.json.error.metadata.candidates.map((c: any) => c.excluded_by), ["only", "only"])

    const unordered = await gateway.embed({ model: "acme/embed", input: "x", provider: { order: ["nobody"], allow_fallbacks: false } })
    expectEnvelope(unordered, 404)
    assert.include(unordered.json.error.message, "provider.order")
  })

  it("408: the gateway's own time limit runs out while the upstream hangs", async () => {
    const started = Date.now()
    const reply = await gateway.embed({ model: "acme/stall", input: "x" })
    expectEnvelope(reply, 408)
    assert.isBelow(Date.now() - started, requestTimeoutMs + 2000)
    assert.include(reply.json.error.message, `${requestTimeoutMs} ms`)
  })

  it("413: a body over SWITCHYARD_MAX_BODY_BYTES, with or without Content-Length; and an upstream's size refusal", async () => {
    const big = { model: "acme/embed", input: "word ".repeat(maxBodyBytes / 4) }
    const declared = await gateway.embed(big)
    expectEnvelope(declared, 413)

    const text = JSON.stringify(big)
    const chunks = Array.from({ length: Math.ceil(text.length / 512) }, (_, i) => text.slice(i * 512, (i + 1) * 512))
    const chunked = await chunkedPost(`${gateway.server.baseUrl}/embeddings`, gateway.server.apiKey, chunks)
    assert.strictEqual(chunked.status, 413)
    assert.strictEqual(chunked.json.error.code, 413)

    const small = JSON.stringify({ model: "acme/embed", input: "fits" })
    const fits = await chunkedPost(`${gateway.server.baseUrl}/embeddings`, gateway.server.apiKey, [small.slice(0, 10), small.slice(10)])
    assert.strictEqual(fits.status, 200)

    const upstream = await upstreamAnswers({ _tag: "Status", status: 413 })
    expectEnvelope(upstream, 413)
    assert.strictEqual(upstream.json.error.metadata.reason, "InputTooLarge")
  })

  it("429: the upstream rate-limits, with its retry-after passed on", async () => {
    const reply = await upstreamAnswers({ _tag: "RateLimited", retryAfter: "7" })
    expectEnvelope(reply, 429)
    assert.strictEqual(reply.json.error.metadata.retry_after_ms, 7000)
    assert.strictEqual(reply.json.error.metadata.provider_name, "alpha")
  })

  it("503: the store fails; the answer says nothing of the cause, and the next request after it recovers is served", async () => {
    const rename = (from: string, to: string) =>
      gateway.server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`ALTER TABLE ${from} RENAME TO ${to}`)
      }))
    await rename("holds", "holds_out_of_service")
    try {
      const reply = await gateway.embed({ model: "acme/embed", input: "x" })
      expectEnvelope(reply, 503)
      assert.strictEqual(reply.json.error.metadata.reason, "store_unavailable")
      assert.strictEqual(reply.headers.get("retry-after"), "1")
      assert.notMatch(reply.text, /holds|relation|sql/i)
    } finally {
      await rename("holds_out_of_service", "holds")
    }
    const recovered = await gateway.embed({ model: "acme/embed", input: "x" })
    assert.strictEqual(recovered.status, 200, recovered.text)
  })

  it("502: the upstream fails, breaks the connection or answers garbage", async () => {
    for (
      const [behaviour, reason] of [
        [{ _tag: "Status", status: 500 }, "ServerError"],
        [{ _tag: "Reset" }, "ConnectionLost"],
        [{ _tag: "MalformedJson" }, "InvalidResponse"],
        [{ _tag: "WrongCount" }, "InvalidResponse"]
      ] as const
    ) {
      const reply = await upstreamAnswers(behaviour)
      expectEnvelope(reply, 502)
      assert.strictEqual(reply.json.error.metadata.reason, reason, behaviour._tag)
    }
  })

  it("503: the upstream is unavailable", async () => {
    const reply = await upstreamAnswers({ _tag: "Status", status: 503 })
    expectEnvelope(reply, 503)
    assert.strictEqual(reply.json.error.metadata.reason, "Unavailable")
  })

  it("524: the upstream does not answer within the provider's time limit, or reports a timeout", async () => {
    const hung = await gateway.embed({ model: "acme/lag", input: "x" })
    expectEnvelope(hung, 524)
    assert.strictEqual(hung.json.error.metadata.reason, "Timeout")
    const reported = await upstreamAnswers({ _tag: "Status", status: 504 })
    expectEnvelope(reported, 524)
  })

  it("529: the upstream is overloaded", async () => {
    const reply = await upstreamAnswers({ _tag: "Status", status: 529 })
    expectEnvelope(reply, 529)
    assert.strictEqual(reply.json.error.metadata.reason, "Overloaded")
  })
})
