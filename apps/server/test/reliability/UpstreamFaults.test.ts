import { afterAll, afterEach, assert, beforeAll, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import { decodeFloat32, endpoint, type Gateway, provider, type Reply, startGateway } from "../embeddings/Gateway.ts"
import * as FakeCohere from "../fakes/FakeCohere.ts"
import * as FakeGemini from "../fakes/FakeGemini.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVoyage from "../fakes/FakeVoyage.ts"
import { corruptions, normalBody } from "./CorruptBodies.ts"
import { level, record, size } from "./Reliability.ts"

const attemptMs = 600
const requestMs = 3000
const slack = 1500
const width = 16
const long = level === "full" ? 1_800_000 : 120_000

type Fault = { readonly name: string; readonly behaviour: FakeUpstream.Behaviour; readonly solo: number; readonly next: boolean }

// What each misbehaviour must end in when it is the only endpoint (`solo`), and whether the plan
// moves on to the next endpoint (`next`).
const faults: ReadonlyArray<Fault> = [
  { name: "500", behaviour: { _tag: "Status", status: 500 }, solo: 502, next: true },
  { name: "502", behaviour: { _tag: "Status", status: 502 }, solo: 502, next: true },
  { name: "503", behaviour: { _tag: "Status", status: 503 }, solo: 503, next: true },
  { name: "504", behaviour: { _tag: "Status", status: 504 }, solo: 524, next: true },
  { name: "529", behaviour: { _tag: "Status", status: 529 }, solo: 529, next: true },
  { name: "429", behaviour: { _tag: "RateLimited", retryAfter: "3" }, solo: 429, next: true },
  { name: "401", behaviour: { _tag: "Status", status: 401 }, solo: 502, next: true },
  { name: "400", behaviour: { _tag: "Status", status: 400 }, solo: 400, next: false },
  { name: "500 with an HTML body", behaviour: { _tag: "Status", status: 500, body: "<html>oops</html>" }, solo: 502, next: true },
  { name: "hang", behaviour: { _tag: "Hang" }, solo: 524, next: true },
  { name: "connection reset", behaviour: { _tag: "Reset" }, solo: 502, next: true },
  { name: "truncated body", behaviour: { _tag: "Truncated" }, solo: 502, next: true },
  { name: "malformed JSON", behaviour: { _tag: "MalformedJson" }, solo: 502, next: true },
  { name: "wrong vector width", behaviour: { _tag: "WrongWidth", width: width + 3 }, solo: 502, next: true },
  { name: "one vector missing", behaviour: { _tag: "WrongCount" }, solo: 502, next: true },
  { name: "body slower than the attempt limit", behaviour: { _tag: "SlowBody", chunkDelayMs: 400 }, solo: 524, next: true },
  { name: "answer after the attempt limit", behaviour: { _tag: "Delay", ms: attemptMs + 400 }, solo: 524, next: true }
]

const harmless: ReadonlyArray<{ readonly name: string; readonly behaviour: FakeUpstream.Behaviour }> = [
  { name: "normal", behaviour: FakeUpstream.normal },
  { name: "slow body within the limit", behaviour: { _tag: "SlowBody", chunkDelayMs: 5 } },
  { name: "answer within the limit", behaviour: { _tag: "Delay", ms: 50 } }
]

const inputs = ["alpha beta", "gamma delta epsilon", "zeta"]

const expectEnvelope = (reply: Reply, status: number, context: string) => {
  assert.strictEqual(reply.status, status, `${context}: ${reply.text.slice(0, 500)}`)
  assert.strictEqual(reply.json?.error?.code, status, context)
  assert.isString(reply.json.error.message, context)
}

// The vectors must be the upstream's, bit for bit, in input order.
const expectVectors = (reply: Reply, input: ReadonlyArray<string>, encoding: "float" | "base64", context: string) => {
  assert.strictEqual(reply.status, 200, `${context}: ${reply.text.slice(0, 500)}`)
  assert.strictEqual(reply.json.data.length, input.length, context)
  reply.json.data.forEach((d: any, i: number) => {
    assert.strictEqual(d.index, i, context)
    const got = encoding === "base64" ? decodeFloat32(d.embedding) : d.embedding
    assert.deepStrictEqual(got, FakeUpstream.vectorFor(`embed|${input[i]}`, width), context)
  })
}

describe("reliability: upstream faults", () => {
  let primary: FakeUpstream.FakeServer
  let backup: FakeUpstream.FakeServer
  let stall: FakeUpstream.FakeServer
  let others: ReadonlyArray<{ readonly slug: string; readonly model: string; readonly fake: FakeUpstream.FakeServer }> = []
  let gateway: Gateway
  let faultsInjected = 0
  let requests = 0
  let served = 0

  const ledger = () =>
    gateway.server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const rows = yield* sql<{ generation_id: string; cost: string }>`SELECT generation_id, CAST(cost_nanos AS text) AS cost FROM ledger`
      const holds = yield* sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM holds`
      const accounts = yield* sql<{ usage: string }>`SELECT CAST(COALESCE(SUM(usage_nanos), 0) AS text) AS usage FROM credit_accounts`
      return { rows, holds: holds[0]!.n, usage: BigInt(accounts[0]!.usage) }
    }))

  const charged = new Map<string, bigint>()

  // Every 200 has exactly one ledger row with its generation id and cost; nothing else was charged;
  // no hold outlives its request (once idle, the process's lease goes back whole, which it can only
  // do when no admitted request still counts on it); the balance moved by exactly the ledger's sum.
  const expectBooksBalance = async (context: string) => {
    let books = await ledger()
    for (const deadline = Date.now() + 10_000; books.holds > 0 && Date.now() < deadline;) {
      await new Promise((resolve) => setTimeout(resolve, 25))
      books = await ledger()
    }
    assert.strictEqual(books.holds, 0, `${context}: holds left`)
    assert.strictEqual(books.rows.length, charged.size, `${context}: ledger rows`)
    let sum = 0n
    for (const row of books.rows) {
      assert.strictEqual(charged.get(row.generation_id), BigInt(row.cost), `${context}: ${row.generation_id}`)
      sum += BigInt(row.cost)
    }
    assert.strictEqual(books.usage, sum, `${context}: balance`)
  }

  const embed = async (body: Record<string, unknown>) => {
    requests += 1
    const started = Date.now()
    const reply = await gateway.embed({ model: "acme/embed", ...body })
    const elapsed = Date.now() - started
    // Wall-clock bounds hold on an idle machine; `pnpm test:reliability` checks them.
    if (level === "full") assert.isBelow(elapsed, requestMs + slack, `took ${elapsed} ms`)
    if (reply.status === 200) {
      served += 1
      const id = reply.headers.get("x-generation-id")!
      assert.strictEqual(reply.json.id, id)
      assert.isFalse(charged.has(id), "a generation id was reused")
      charged.set(id, nanosFromCredits(reply.json.usage.cost)!)
    }
    return reply
  }

  beforeAll(async () => {
    primary = await FakeOpenAi.start()
    backup = await FakeOpenAi.start()
    stall = await FakeOpenAi.start()
    stall.setBehaviour({ _tag: "Hang" })
    const coral = await FakeCohere.start({ apiKey: "sk-fake" })
    const voyage = await FakeVoyage.start({ apiKey: "sk-fake" })
    const gemini = await FakeGemini.start({ apiKey: "sk-fake" })
    others = [
      { slug: "coral", model: "acme/coral", fake: coral },
      { slug: "voyage", model: "acme/voyage", fake: voyage },
      { slug: "gemini", model: "acme/gemini", fake: gemini }
    ]
    gateway = await startGateway({
      config: {
        providers: [
          provider("primary", primary.url, { timeout_ms: attemptMs }, [
            endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" }, max_batch_items: 2 })
          ]),
          provider("backup", backup.url, { timeout_ms: attemptMs }, [
            endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.3" } })
          ]),
          { ...provider("coral", coral.url, { timeout_ms: attemptMs }, [endpoint("acme/coral", { upstream_model: "embed-english-light-v3.0", dimensions: 384 })]), adapter: "cohere" },
          { ...provider("voyage", voyage.url, { timeout_ms: attemptMs }, [endpoint("acme/voyage", { upstream_model: "voyage-3.5", dimensions: 1024 })]), adapter: "voyage" },
          { ...provider("gemini", gemini.url, { timeout_ms: attemptMs }, [endpoint("acme/gemini", { upstream_model: "gemini-embedding-001", dimensions: 3072 })]), adapter: "gemini" },
          provider("stall1", stall.url, { timeout_ms: 2000 }, [endpoint("acme/stall")]),
          provider("stall2", stall.url, { timeout_ms: 2000 }, [endpoint("acme/stall")])
        ]
      },
      // An unused lease goes back after 50 ms, so the books can be read with no lease open.
      env: { SWITCHYARD_REQUEST_TIMEOUT_MS: String(requestMs), SWITCHYARD_LEASE_IDLE_MS: "50" },
      credits: 1000
    })
  })
  afterEach(() => {
    for (const fake of [primary, backup, ...others.map((o) => o.fake)]) fake.setBehaviour(FakeUpstream.normal)
  })
  afterAll(async () => {
    record("upstream-faults", { faultsInjected, requests, inputsTried: 0 })
    await gateway?.close()
    await Promise.all([primary?.close(), backup?.close(), stall?.close(), ...others.map((o) => o.fake.close())])
  })

  const only = { order: ["primary"], allow_fallbacks: false }
  const both = { order: ["primary", "backup"] }

  it("each fault alone ends in its status within the time limit, with nothing charged", async () => {
    for (const fault of faults) {
      primary.setBehaviour(fault.behaviour)
      faultsInjected += 1
      const reply = await embed({ input: inputs.slice(0, 2), provider: only })
      expectEnvelope(reply, fault.solo, fault.name)
      assert.strictEqual(reply.json.error.metadata.provider_name, "primary", fault.name)
      await expectBooksBalance(fault.name)
    }
  }, 90_000)

  // Both endpoints answer once more, which ends the outage window an earlier fault opened (an
  // endpoint that failed lately is tried after the others), so the plan tries primary first again.
  const heal = async (context: string) => {
    primary.setBehaviour(FakeUpstream.normal)
    backup.setBehaviour(FakeUpstream.normal)
    for (const provider of [only, { order: ["backup"], allow_fallbacks: false }]) {
      expectVectors(await embed({ input: inputs.slice(0, 1), provider }), inputs.slice(0, 1), "float", `${context}, healing`)
    }
  }

  it("each fault falls back to a healthy endpoint whose vectors arrive intact, charged once", async () => {
    for (const fault of faults) {
      await heal(fault.name)
      primary.setBehaviour(fault.behaviour)
      faultsInjected += 1
      const reply = await embed({ input: inputs.slice(0, 2), provider: both })
      if (!fault.next) {
        expectEnvelope(reply, fault.solo, fault.name)
      } else {
        expectVectors(reply, inputs.slice(0, 2), "float", fault.name)
        assert.strictEqual(reply.headers.get("x-switchyard-provider"), "backup", fault.name)
      }
      await expectBooksBalance(fault.name)
    }
  }, 90_000)

  it("a fault in one batch of a split request fails the whole attempt: no partial vectors", async () => {
    for (const fault of faults.filter((f) => f.next)) {
      primary.setBehaviour([FakeUpstream.normal, fault.behaviour])
      faultsInjected += 1
      const solo = await embed({ input: inputs, provider: only })
      expectEnvelope(solo, fault.solo, `split, ${fault.name}`)
      primary.setBehaviour([FakeUpstream.normal, fault.behaviour])
      const rescued = await embed({ input: inputs, provider: both })
      expectVectors(rescued, inputs, "float", `split, ${fault.name}`)
      await expectBooksBalance(`split, ${fault.name}`)
    }
  }, 90_000)

  it("an upstream that answers 200 with something other than embeddings is never passed on", async () => {
    for (const corruption of corruptions) {
      const encoding = corruption.base64 === true ? "base64" : "float"
      const input = inputs.slice(0, 2)
      const text = corruption.body(normalBody("embed", input, encoding))
      primary.setBehaviour({ _tag: "Status", status: 200, body: text })
      faultsInjected += 2
      const solo = await embed({ input, provider: only, encoding_format: encoding })
      expectEnvelope(solo, 502, corruption.name)
      assert.strictEqual(solo.json.error.metadata.reason, "InvalidResponse", corruption.name)
      const rescued = await embed({ input, provider: both, encoding_format: encoding })
      expectVectors(rescued, input, encoding, corruption.name)
      assert.strictEqual(rescued.headers.get("x-switchyard-provider"), "backup", corruption.name)
      await expectBooksBalance(corruption.name)
    }
  }, 90_000)

  it("the same faults in the Cohere, Voyage and Gemini wire formats end in the same statuses", async () => {
    for (const other of others) {
      const healthy = await embed({ model: other.model, input: inputs.slice(0, 2) })
      assert.strictEqual(healthy.status, 200, `${other.slug}: ${healthy.text.slice(0, 300)}`)
      for (const fault of faults) {
        other.fake.setBehaviour(fault.behaviour)
        faultsInjected += 1
        const reply = await embed({ model: other.model, input: inputs.slice(0, 2) })
        expectEnvelope(reply, fault.solo, `${other.slug}, ${fault.name}`)
      }
      other.fake.setBehaviour(FakeUpstream.normal)
      await expectBooksBalance(other.slug)
    }
  }, 90_000)

  it("every endpoint hanging ends in 408 at the request's time limit", async () => {
    const started = Date.now()
    faultsInjected += 2
    const reply = await embed({ model: "acme/stall", input: "x" })
    expectEnvelope(reply, 408, "all hanging")
    if (level === "full") assert.isAtLeast(Date.now() - started, requestMs - 100)
    await expectBooksBalance("all hanging")
  }, 90_000)

  it("random faults on both endpoints, one request at a time: the status the plan implies, or intact vectors", async () => {
    const behaviour = fc.constantFrom(...faults.map((f) => ({ ...f, fault: true })), ...harmless.map((h) => ({ ...h, solo: 200, next: true, fault: false })))
    await fc.assert(
      fc.asyncProperty(
        behaviour,
        behaviour,
        fc.boolean(),
        fc.constantFrom<"float" | "base64">("float", "base64"),
        fc.integer({ min: 1, max: 3 }),
        async (first, second, fallbacks, encoding, count) => {
          await heal(`${first.name} then ${second.name}`)
          primary.setBehaviour(first.behaviour)
          backup.setBehaviour(second.behaviour)
          faultsInjected += (first.fault ? 1 : 0) + (second.fault ? 1 : 0)
          const input = inputs.slice(0, count)
          const reply = await embed({
            input,
            encoding_format: encoding,
            provider: fallbacks ? both : only
          })
          const context = `${first.name} then ${second.name}, fallbacks ${fallbacks}, ${encoding}, ${count} inputs`
          const expected = !first.fault ? 200 : !fallbacks || !first.next ? first.solo : second.fault ? second.solo : 200
          if (expected === 200) {
            expectVectors(reply, input, encoding, context)
            assert.strictEqual(reply.headers.get("x-switchyard-provider"), first.fault ? "backup" : "primary", context)
          } else {
            expectEnvelope(reply, expected, context)
          }
          await expectBooksBalance(context)
        }
      ),
      { numRuns: size.faultRuns }
    )
  }, long)

  it("random faults under concurrency: every answer is intact vectors or an envelope, the books balance", async () => {
    const pool = [...faults.map((f) => f.behaviour), ...harmless.map((h) => h.behaviour)]
    const rounds = Math.max(2, Math.round(size.faultRuns / 20))
    for (let round = 0; round < rounds; round++) {
      const picks = fc.sample(fc.constantFrom(...pool), 40)
      primary.setBehaviour(picks.slice(0, 20))
      backup.setBehaviour(picks.slice(20))
      faultsInjected += picks.filter((b) => !harmless.some((h) => h.behaviour === b)).length
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) =>
        embed({ input: inputs.slice(0, 1 + (i % 2)), provider: i % 3 === 0 ? only : both })
      ))
      for (const [i, reply] of replies.entries()) {
        if (reply.status === 200) expectVectors(reply, inputs.slice(0, 1 + (i % 2)), "float", `round ${round}, request ${i}`)
        else {
          assert.include([400, 408, 429, 502, 503, 524, 529], reply.status, reply.text)
          assert.strictEqual(reply.json.error.code, reply.status)
        }
      }
      await expectBooksBalance(`round ${round}`)
    }
    assert.isAbove(served, 0)
  }, long)
})
