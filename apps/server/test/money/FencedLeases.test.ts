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

/**
 * Waits until the request reached the upstream (it was admitted) and returns the gateway's lease
 * row it was admitted from.
 */
const leaseRow = async (gateway: Gateway, fake: FakeUpstream.FakeServer, seen: number) => {
  for (let i = 0; i < 200; i++) {
    const { holds } = await books(gateway)
    if (holds.length > 0 && fake.requests.length > seen) return holds[0]!
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
  throw new Error("the request was not admitted")
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

  /** A request admitted under the gateway's lease, while upstream: `take` moves the lease (and `drain` may spend the room). */
  const takenWhileUpstream = async (
    take: (sql: SqlClient.SqlClient, id: string) => Effect.Effect<unknown, unknown>,
    drain: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown> = () => Effect.void
  ) => {
    fake.setBehaviour({ _tag: "Delay", ms: 600 })
    const before = await books(gateway)
    const seen = fake.requests.length
    const answer = gateway.embed({ model: "acme/embed", input: "taken while upstream" })
    const row = await leaseRow(gateway, fake, seen)
    await gateway.server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* take(sql, row.id)
      yield* drain(sql)
    }))
    const reply = await answer
    fake.setBehaviour({ _tag: "Normal" })
    return { before, reply, row }
  }

  /** The request was answered 200 and its row written and charged once, though its lease moved. */
  const settled = async (take: (sql: SqlClient.SqlClient, id: string) => Effect.Effect<unknown, unknown>) => {
    const { before, reply, row } = await takenWhileUpstream(take)
    assert.strictEqual(reply.status, 200, reply.text)
    const generation = reply.headers.get("x-generation-id")!
    const after = await books(gateway)
    assert.deepStrictEqual(after.ledger.filter((g) => !before.ledger.includes(g)), [generation], "one ledger row, the answered request's")
    assert.isTrue(after.spent > before.spent, "the key was charged")
    assert.strictEqual(after.usage - before.usage, after.spent - before.spent, "the workspace was charged the same")
    // The next request is admitted from a lease granted afresh, under a new token.
    const next = await gateway.embed({ model: "acme/embed", input: "after the lease was taken" })
    assert.strictEqual(next.status, 200, next.text)
    const again = await books(gateway)
    assert.strictEqual(again.ledger.length, after.ledger.length + 1)
    assert.isTrue(again.holds.every((h) => h.fence !== row.fence), "the taken lease's token is not used again")
  }

  it("a lease swept while its request is upstream: the answered request is settled under the key's room, 200, one row, charged once", () =>
    settled((sql, id) => sql`DELETE FROM holds WHERE id = ${id}`), 60_000)

  it("a lease row whose token changed (taken and granted again) while its request is upstream: 200, one row, charged once", () =>
    // A token no grant has given yet (PostgreSQL's sequence and SQLite's counter only grow).
    settled((sql, id) => sql`UPDATE holds SET fence = fence + 1000000 WHERE id = ${id}`), 60_000)

  it("a lease swept while its request is upstream, and the credits spent meanwhile: the row would overshoot, 503, no row, no charge", async () => {
    const { before, reply } = await takenWhileUpstream(
      (sql, id) => sql`DELETE FROM holds WHERE id = ${id}`,
      (sql) => sql`UPDATE credit_accounts SET usage_nanos = credits_nanos`
    )
    assert.strictEqual(reply.status, 503, reply.text)
    assert.strictEqual(reply.headers.get("retry-after"), "1")
    assert.strictEqual(reply.json.error.metadata.reason, "store_unavailable")
    const after = await books(gateway)
    assert.deepStrictEqual(after.ledger, before.ledger, "no ledger row for the request answered 503")
    assert.strictEqual(after.spent, before.spent, "the key was not charged")
  }, 60_000)
})
