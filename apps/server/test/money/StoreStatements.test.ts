import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

const configFor = (url: string) => ({
  providers: [provider("alpha", url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "1" } })])],
  workspaces: { default: { cache: true } }
})

/** The store's statements by kind and the batch rows observed, from `/metrics`. */
const storeFigures = async (gateway: Gateway) => {
  const text = await (await fetch(`${gateway.server.origin}/metrics`)).text()
  const statements: Record<string, number> = {}
  for (const match of text.matchAll(/^switchyard_store_statements_total\{kind="([a-z_]+)"\} (\d+)$/gmu)) {
    statements[match[1]!] = Number(match[2])
  }
  const batches = Number(/^switchyard_store_batch_rows_count (\d+)$/mu.exec(text)?.[1] ?? "0")
  const rows = Number(/^switchyard_store_batch_rows_sum (\d+)$/mu.exec(text)?.[1] ?? "0")
  return { statements, batches, rows }
}

const delta = (after: Record<string, number>, before: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(after).map(([kind, n]) => [kind, n - (before[kind] ?? 0)] as const).filter(([, n]) => n > 0)
  )

describe(`store statements per request (${storeKind})`, () => {
  let fake: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    fake = await FakeOpenAi.start()
    gateway = await startGateway({ config: configFor(fake.url) })
  })
  afterAll(async () => {
    await gateway.close()
    await fake.close()
  })

  it("a key no scope limits: each answered request costs its one ledger write and nothing else", async () => {
    assert.strictEqual((await gateway.embed({ model: "acme/embed", input: "warm" })).status, 200)
    const before = await storeFigures(gateway)
    for (let i = 0; i < 5; i++) {
      const reply = await gateway.embed({ model: "acme/embed", input: `one by one ${i}` })
      assert.strictEqual(reply.status, 200, reply.text)
    }
    const after = await storeFigures(gateway)
    const spent = delta(after.statements, before.statements)
    // (On PostgreSQL the process's heartbeat may fall in the window too: only the money path is checked.)
    assert.deepStrictEqual([spent.flush, spent.lease, spent.lease_return], [5, undefined, undefined], JSON.stringify(spent))
    assert.deepStrictEqual([after.batches - before.batches, after.rows - before.rows], [5, 5])
  })

  it("a key with a limit: one lease statement covers many requests, and concurrent rows share batches", async () => {
    const created = await gateway.call("/keys", { name: "limited", limit: 10 }, { key: gateway.server.managementKey })
    assert.strictEqual(created.status, 201, created.text)
    const key = created.json.key as string
    const before = await storeFigures(gateway)
    const replies = await Promise.all(
      Array.from({ length: 12 }, (_, i) => gateway.embed({ model: "acme/embed", input: `together ${i}` }, { key }))
    )
    for (const reply of replies) assert.strictEqual(reply.status, 200, reply.text)
    const after = await storeFigures(gateway)
    const spent = delta(after.statements, before.statements)
    // The key's facts are read once, its lease granted once: the rest is ledger writes.
    assert.strictEqual(spent.lease, 1, JSON.stringify(spent))
    assert.strictEqual(after.rows - before.rows, 12)
    assert.strictEqual(spent.flush, after.batches - before.batches)
  })

  it("cached requests with prepaid credits on: no statement per request but the shared ledger write", async () => {
    const granted = await gateway.call("/credits", { amount: 100 }, { key: gateway.server.managementKey })
    assert.strictEqual(granted.status, 200, granted.text)
    assert.strictEqual((await gateway.embed({ model: "acme/embed", input: "cached" })).status, 200)
    const hit = await gateway.embed({ model: "acme/embed", input: "cached" })
    assert.strictEqual(hit.headers.get("x-switchyard-cache"), "hit")
    // Another key of the workspace, whose requests are all hits: its lease is never granted anything.
    const created = await gateway.call("/keys", { name: "reader" }, { key: gateway.server.managementKey })
    assert.strictEqual(created.status, 201, created.text)
    const key = created.json.key as string
    assert.strictEqual((await gateway.embed({ model: "acme/embed", input: "cached" }, { key })).status, 200)
    const before = await storeFigures(gateway)
    for (let i = 0; i < 20; i++) assert.strictEqual((await gateway.embed({ model: "acme/embed", input: "cached" }, { key })).status, 200)
    const spent = delta((await storeFigures(gateway)).statements, before.statements)
    // A cost-0 row under credits is checked against the scopes once, not once per request.
    assert.isAtMost(spent.lease ?? 0, 1, JSON.stringify(spent))
    assert.strictEqual(spent.flush, 20, JSON.stringify(spent))
  })
})
