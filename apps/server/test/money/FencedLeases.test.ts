import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

const books = (gateway: Gateway) =>
  gateway.server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ledger = yield* sql<{ generation_id: string }>`SELECT generation_id FROM ledger`
    const holds = yield* sql<{ id: string; fence: string }>`SELECT id, CAST(fence AS text) AS fence FROM holds`
    const spent = yield* sql<{ n: string }>`SELECT CAST(COALESCE(SUM(spent_nanos), 0) AS text) AS n FROM key_spend WHERE day = '-infinity'`
    const usage = yield* sql<{ n: string }>`SELECT CAST(COALESCE(SUM(usage_nanos), 0) AS text) AS n FROM credit_accounts`
    return { ledger: ledger.map((r) => r.generation_id), holds, spent: BigInt(spent[0]!.n), usage: BigInt(usage[0]!.n) }
  }))

/** Waits until the gateway's lease row is in the store (the request was admitted from it). */
const leaseRow = async (gateway: Gateway) => {
  for (let i = 0; i < 200; i++) {
    const { holds } = await books(gateway)
    if (holds.length > 0) return holds[0]!
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error("no lease row appeared")
}

describe(`fenced leases (${storeKind})`, () => {
  let fake: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    fake = await FakeOpenAi.start()
    gateway = await startGateway({
      config: { providers: [provider("alpha", fake.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" } })])] },
      credits: 10
    })
  })
  afterAll(async () => {
    await gateway?.close()
    await fake?.close()
  })

  const takenWhileUpstream = async (take: (sql: SqlClient.SqlClient, id: string) => Effect.Effect<unknown, unknown>) => {
    fake.setBehaviour({ _tag: "Delay", ms: 600 })
    const before = await books(gateway)
    const answer = gateway.embed({ model: "acme/embed", input: "taken while upstream" })
    const row = await leaseRow(gateway)
    await gateway.server.run(Effect.gen(function*() {
      yield* take(yield* SqlClient.SqlClient, row.id)
    }))
    const reply = await answer
    fake.setBehaviour({ _tag: "Normal" })
    assert.strictEqual(reply.status, 503, reply.text)
    assert.strictEqual(reply.headers.get("retry-after"), "1")
    assert.strictEqual(reply.json.error.code, 503)
    assert.strictEqual(reply.json.error.metadata.reason, "store_unavailable")
    const after = await books(gateway)
    assert.deepStrictEqual(after.ledger, before.ledger, "no ledger row for the request answered 503")
    assert.strictEqual(after.spent, before.spent, "the key was not charged")
    assert.strictEqual(after.usage, before.usage, "the workspace was not charged")
    // The next request is admitted from a lease granted afresh, under a new token.
    const next = await gateway.embed({ model: "acme/embed", input: "after the lease was taken" })
    assert.strictEqual(next.status, 200, next.text)
    const again = await books(gateway)
    assert.strictEqual(again.ledger.length, before.ledger.length + 1)
    assert.include(again.ledger, next.headers.get("x-generation-id"))
    assert.isTrue(again.holds.every((h) => h.fence !== row.fence), "the taken lease's token is not used again")
  }

  it("a lease swept while its request is upstream: the request is answered 503 with Retry-After, writes no row and is not charged", () =>
    takenWhileUpstream((sql, id) => sql`DELETE FROM holds WHERE id = ${id}`), 60_000)

  it("a lease row whose token changed (taken and granted again) while its request is upstream: 503, no row, no charge", () =>
    // A token no grant has given yet (PostgreSQL's sequence and SQLite's counter only grow).
    takenWhileUpstream((sql, id) => sql`UPDATE holds SET fence = fence + 1000000 WHERE id = ${id}`), 60_000)
})
