import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { endpoint, type Gateway, provider, startGateway, waitFor } from "./Gateway.ts"

interface Delivery {
  readonly at: number
  readonly headers: Http.IncomingHttpHeaders
  readonly body: any
}

type Answer = { readonly status: number; readonly hold?: boolean }

// A broadcast destination that answers each delivery as scripted (200 once the script is spent).
const startWebhook = async () => {
  const deliveries: Array<Delivery> = []
  let script: Array<Answer> = []
  let release: () => void = () => {}
  let held = 0
  const server = Http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (c: Buffer) => parts.push(c))
    req.on("end", () => {
      deliveries.push({ at: Date.now(), headers: req.headers, body: JSON.parse(Buffer.concat(parts).toString("utf8")) })
      const answer = script.shift() ?? { status: 200 }
      const send = () => res.writeHead(answer.status, { "content-type": "application/json" }).end("{}")
      if (answer.hold !== true) return send()
      held += 1
      release = () => {
        release = () => {}
        held -= 1
        send()
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`,
    deliveries,
    script: (answers: ReadonlyArray<Answer>) => {
      script = [...answers]
    },
    held: () => held,
    release: () => release(),
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

describe("session_id, trace and broadcast", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let webhook: Awaited<ReturnType<typeof startWebhook>>

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    webhook = await startWebhook()
    gateway = await startGateway({
      config: {
        providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })])],
        broadcast: [{ url: webhook.url, headers: { authorization: "Bearer hook-secret", "x-tenant": "acme" }, timeout_ms: 5000 }]
      },
      credits: 10
    })
  })
  afterAll(async () => {
    webhook.release()
    await gateway.close()
    await Promise.all([alpha.close(), webhook.close()])
  })
  afterEach(() => webhook.script([]))

  const deliveriesOf = (id: string) => webhook.deliveries.filter((d) => d.body.generation_id === id)

  it("session_id and trace never reach the upstream; the body's session_id wins over x-session-id", async () => {
    const trace = { trace_id: "trace-7f3a", span_name: "embed-docs", generation_name: "gen-x", team: "search", nested: { depth: [1, 2] } }
    const both = await gateway.embed(
      { model: "acme/embed", input: "hello", session_id: "session-from-body", trace },
      { headers: { "x-session-id": "session-from-header" } }
    )
    assert.strictEqual(both.status, 200, both.text)
    const upstream = alpha.requests.at(-1)!
    for (const secret of ["session-from-body", "session-from-header", "trace-7f3a", "embed-docs", "gen-x", "search", "depth"]) {
      assert.notInclude(upstream.raw, secret)
      assert.notInclude(JSON.stringify(upstream.headers), secret)
    }
    assert.deepStrictEqual(Object.keys(upstream.body as object).sort(), ["input", "model"])

    const headerOnly = await gateway.embed({ model: "acme/embed", input: "hello" }, { headers: { "x-session-id": "session-from-header" } })
    assert.strictEqual(headerOnly.status, 200, headerOnly.text)

    await waitFor(() => deliveriesOf(both.json.id).length === 1 && deliveriesOf(headerOnly.json.id).length === 1)
    assert.strictEqual(deliveriesOf(both.json.id)[0]!.body.session_id, "session-from-body")
    assert.strictEqual(deliveriesOf(headerOnly.json.id)[0]!.body.session_id, "session-from-header")
  })

  it("broadcast gets every trace key, asynchronously, with retries, and the response never waits for it", async () => {
    webhook.script([{ status: 500, hold: true }, { status: 503 }, { status: 200 }])
    const trace = { trace_id: "t-1", trace_name: "ingest", parent_span_id: "p-9", customer: "acme", weights: [0.5, 0.5] }
    const reply = await gateway.embed({ model: "acme/embed", input: "hello world", trace, user: "end-user-1" })
    assert.strictEqual(reply.status, 200, reply.text)
    const id = reply.json.id

    await waitFor(() => deliveriesOf(id).length === 1)
    assert.strictEqual(webhook.held(), 1, "the first delivery is still unanswered, yet the response has arrived")
    webhook.release()
    await waitFor(() => deliveriesOf(id).length === 3)

    // The back-off between tries and the stop after a success are checked on the test clock
    // (Broadcast.test.ts); here, that the three tries carry the same event.
    const attempts = deliveriesOf(id)
    for (const delivery of attempts) {
      assert.strictEqual(delivery.headers.authorization, "Bearer hook-secret")
      assert.strictEqual(delivery.headers["x-tenant"], "acme")
      assert.strictEqual(delivery.headers["x-switchyard-event-id"], id)
      assert.deepStrictEqual(delivery.body, attempts[0]!.body)
    }
    const event = attempts[0]!.body
    assert.deepStrictEqual(event.trace, trace)
    assert.strictEqual(event.type, "embeddings.served")
    assert.strictEqual(event.model, "acme/embed")
    assert.strictEqual(event.provider, "alpha")
    assert.strictEqual(event.user, "end-user-1")
    assert.deepStrictEqual(event.usage, {
      prompt_tokens: reply.json.usage.prompt_tokens,
      total_tokens: reply.json.usage.total_tokens,
      cost: reply.json.usage.cost,
      is_byok: false
    })
  })
})
