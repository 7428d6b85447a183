import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { endpoint, type Gateway, provider, type Reply, servedBy, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { storeKind } from "../support/TestServer.ts"

// A request keeps the catalog snapshot it was routed with (catalog/LiveCatalog.ts), credentials
// included: a provider's key rotated through the management API while a request routed before the
// rotation is in flight is used from the next request on; that request's upstream calls all carry
// the key it was routed with, never a mix of the two. The request is held at a first provider
// (which then fails) until the rotation is done, so its calls to the rotated provider come after
// the rotation: the fallback attempt must read the request's snapshot, not the live catalog.

const firstKey = "sk-first-provider-key-1111"
const oldKey = "sk-rotating-provider-old-2222"
const newKey = "sk-rotating-provider-new-3333"

interface Task {
  readonly name: "embeddings" | "rerank"
  readonly model: string
  readonly endpoint: Record<string, unknown>
  /** A request that the rotated provider serves in three upstream calls (two items a call). */
  readonly send: (gateway: Gateway, order: ReadonlyArray<string>, items: ReadonlyArray<string>) => Promise<Reply>
}

// Each request its own items: the second is not answered from the embeddings cache.
/** A promise and what settles it: a latch the test and the fake upstream hand each other. */
const latch = () => {
  let resolve = () => {}
  const promise = new Promise<void>((done) => (resolve = done))
  return { promise, resolve: () => resolve() }
}

const itemsOf = (request: string) => ["one river", "two rivers", "three deltas", "four deltas", "five seas"].map((item) => `${item} (${request})`)

const tasks: ReadonlyArray<Task> = [
  {
    name: "embeddings",
    model: "rot/embed",
    endpoint: endpoint("rot/embed", { upstream_model: "rot-embed", max_batch_items: 2 }),
    send: (gateway, order, items) => gateway.embed({ model: "rot/embed", input: items, provider: { order } })
  },
  {
    name: "rerank",
    model: "rot/rerank",
    endpoint: { model: "rot/rerank", upstream_model: "rot-rerank", task: "rerank", pricing: { prompt: "0.01" }, max_documents: 2 },
    send: (gateway, order, items) => gateway.call("/rerank", { model: "rot/rerank", query: "rivers", documents: items, provider: { order } })
  }
]

describe(`a request keeps the credentials of the snapshot it was routed with (${storeKind})`, () => {
  let first: FakeUpstream.FakeServer
  let rotating: FakeUpstream.FakeServer
  let gateway: Gateway
  beforeAll(async () => {
    first = await FakeOpenAi.start({ apiKey: firstKey })
    // The rotated provider's host takes both keys: which one a call carries is what is measured.
    rotating = await FakeOpenAi.start({ apiKey: [oldKey, newKey] })
    gateway = await startGateway({ credits: 10, config: { providers: [] } })
  })
  afterAll(async () => {
    await gateway?.close()
    await first?.close()
    await rotating?.close()
  })

  const admin = (method: string, path: string, body?: unknown) => gateway.call(path, body, { key: gateway.server.managementKey, method })
  const managed = (slug: string, url: string, apiKey: string, task: Task) => ({
    ...provider(slug, url, {}, [task.endpoint]),
    adapter: "jina",
    api_key_env: undefined,
    api_key: apiKey
  })
  const keysOf = (requests: ReadonlyArray<FakeUpstream.RecordedRequest>) => requests.map((r) => FakeUpstream.bearer(r))

  for (const task of tasks) {
    it(`${task.name}: the key rotated mid-request is used from the next request on`, async () => {
      const firstSlug = `first-${task.name}`
      const rotatedSlug = `rotated-${task.name}`
      assert.strictEqual((await admin("POST", "/providers", managed(firstSlug, first.url, firstKey, task))).status, 201)
      assert.strictEqual((await admin("POST", "/providers", managed(rotatedSlug, rotating.url, oldKey, task))).status, 201)

      // The first provider holds the request until the rotation is done, then fails: the request
      // falls back to the rotated provider after the rotation.
      const arrived = latch()
      const rotated = latch()
      first.setBehaviour({ _tag: "Held", until: rotated.promise, arrived: arrived.resolve, answer: { _tag: "Status", status: 503 } })
      const seen = rotating.requests.length
      const inFlight = task.send(gateway, [firstSlug, rotatedSlug], itemsOf("routed before"))
      await arrived.promise
      const rotation = await admin("PATCH", `/providers/${rotatedSlug}`, { api_key: newKey })
      assert.strictEqual(rotation.status, 200, rotation.text)
      assert.deepStrictEqual(rotation.json.data.api_key, { set: true, last4: newKey.slice(-4) })
      assert.strictEqual(rotating.requests.length, seen, "nothing reached the rotated provider before the rotation")
      rotated.resolve()
      const answered = await inFlight
      first.setBehaviour(FakeUpstream.normal)
      assert.strictEqual(answered.status, 200, answered.text)
      assert.strictEqual(servedBy(answered), rotatedSlug)
      // Three calls (five items, two a call), every one with the key the request was routed with.
      assert.deepStrictEqual(keysOf(rotating.requests.slice(seen)), [oldKey, oldKey, oldKey])

      const afterSeen = rotating.requests.length
      const next = await task.send(gateway, [rotatedSlug], itemsOf("routed after"))
      assert.strictEqual(next.status, 200, next.text)
      assert.strictEqual(servedBy(next), rotatedSlug)
      assert.deepStrictEqual(keysOf(rotating.requests.slice(afterSeen)), [newKey, newKey, newKey])
    })
  }
})
