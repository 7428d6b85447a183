import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as fc from "fast-check"
import * as Crypto from "node:crypto"
import { EmbeddingCache, type Entry } from "../../src/cache/EmbeddingCache.ts"
import * as MemoryTier from "../../src/cache/MemoryTier.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import * as StoreChanges from "../../src/store/sql/StoreChanges.ts"
import * as StoreStatements from "../../src/store/sql/StoreStatements.ts"
import { endpoint, provider, startReplicas } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import { sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

const MiB = 1024 * 1024

const entry = (n: number): Entry => ({ vector: VectorEncoding.fromStored({ encoding: "float", text: `[${n},0.5]`, width: 2 }), tokens: n })

const cacheLayer = (env: Record<string, string>) =>
  EmbeddingCache.layer.pipe(
    Layer.provideMerge(sqlLayer()),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ REDIS_URL: "", SWITCHYARD_CACHE_TTL_SECONDS: "3600", ...env })))
  )

describe("the memory tier's bound", () => {
  it("defaults to a sixteenth of the memory limit, at most 64 MiB; 32 MiB without a limit", () => {
    assert.deepStrictEqual(
      [256 * MiB, 512 * MiB, 1024 * MiB, 4096 * MiB, undefined].map(MemoryTier.defaultBytes),
      [16 * MiB, 32 * MiB, 64 * MiB, 64 * MiB, 32 * MiB]
    )
  })

  // Room for three entries of this size, not four.
  const size = MemoryTier.sizeOf(entry(1))
  it.effect("holds the most recently used entries within its bytes, the least recently used going first", () =>
    Effect.gen(function*() {
      assert.strictEqual(size, 7 + MemoryTier.entryOverheadBytes)
      const cache = yield* EmbeddingCache
      const sql = yield* SqlClient.SqlClient
      for (const n of [1, 2, 3]) yield* cache.setMany([[`k${n}`, entry(n)]])
      // k1 is used: k2 is now the least recently used, and goes when k4 comes.
      yield* cache.getMany([["k1"]])
      yield* cache.setMany([["k4", entry(4)]])
      yield* sql`DELETE FROM effect_persistence_embedding_cache`
      assert.deepStrictEqual(yield* cache.getMany([["k1", "k2", "k3", "k4"]]), [[entry(1), undefined, entry(3), entry(4)]])
    }).pipe(Effect.provide(cacheLayer({ SWITCHYARD_CACHE_MEMORY_BYTES: String(size * 4 - 1) }))), 180_000)

  it.effect("holds nothing at 0 bytes: every read is the store's", () =>
    Effect.gen(function*() {
      const cache = yield* EmbeddingCache
      const sql = yield* SqlClient.SqlClient
      yield* cache.setMany([["k5", entry(5)]])
      assert.deepStrictEqual(yield* cache.getMany([["k5"]]), [[entry(5)]])
      yield* sql`DELETE FROM effect_persistence_embedding_cache`
      assert.deepStrictEqual(yield* cache.getMany([["k5"]]), [[undefined]])
    }).pipe(Effect.provide(cacheLayer({ SWITCHYARD_CACHE_MEMORY_BYTES: "0" }))), 180_000)
})

/** The `select` statements the store has run, from the statement counter. */
const selects = Effect.map(
  Effect.flatMap(StoreStatements.StoreStatements, (statements) => statements.render),
  (text) => Number(/^switchyard_store_statements_total\{kind="select"\} (\d+)$/mu.exec(text)?.[1] ?? "0")
)

describe(`a hit served from memory (${storeKind})`, () => {
  const hits = Effect.gen(function*() {
    const cache = yield* EmbeddingCache
    yield* cache.setMany([["hot", entry(1)]])
    const before = yield* selects
    for (let i = 0; i < 10; i++) assert.deepStrictEqual(yield* cache.getMany([["hot"]]), [[entry(1)]])
    return (yield* selects) - before
  })

  it.effect("reads no store statement", () => Effect.map(hits, (n) => assert.strictEqual(n, 0)).pipe(Effect.provide(cacheLayer({}))), 180_000)

  it.effect("with the tier off, each hit is one read of the store", () =>
    Effect.map(hits, (n) => assert.strictEqual(n, 10)).pipe(Effect.provide(cacheLayer({ SWITCHYARD_CACHE_MEMORY_BYTES: "0" }))), 180_000)
})

/** The cache keys the payloads announce, in order. */
const keysOf = (payloads: ReadonlyArray<string>) =>
  payloads.flatMap((payload) => {
    const change = StoreChanges.decode(payload)
    return change?._tag === "CacheEntries" ? change.keys : []
  })

describe("word of refreshed cache entries", () => {
  it("goes in as few notifications under PostgreSQL's 8000 bytes as the keys fit, and reads back whole", () => {
    const keys = Array.from({ length: 1_000 }, (_, i) => Crypto.createHash("sha256").update(String(i)).digest("base64url"))
    const payloads = StoreChanges.encode({ _tag: "CacheEntries", keys })
    // 43 characters a key and a comma: 179 keys a payload.
    assert.strictEqual(payloads.length, Math.ceil(1_000 / Math.floor((StoreChanges.maxPayloadBytes - 2 + 1) / 44)))
    for (const payload of payloads) assert.isAtMost(Buffer.byteLength(payload), StoreChanges.maxPayloadBytes)
    assert.deepStrictEqual(keysOf(payloads), keys)
  })

  it("any keys: every payload under the limit, the keys read back in order", () => {
    const key = fc.stringMatching(/^[A-Za-z0-9_-]{1,64}$/u)
    fc.assert(fc.property(fc.array(key, { minLength: 1, maxLength: 600 }), (keys) => {
      const payloads = StoreChanges.encode({ _tag: "CacheEntries", keys })
      assert.isTrue(payloads.every((payload) => Buffer.byteLength(payload) <= StoreChanges.maxPayloadBytes))
      assert.deepStrictEqual(keysOf(payloads), keys)
    }), { numRuns: 100 })
  })
})

describe.skipIf(storeKind !== "postgres")("a refresh on one replica, on the other (postgres)", () => {
  it("the other replica serves the refreshed vectors from then on, not the ones it keeps in memory", async () => {
    const options: FakeOpenAi.Options = {}
    const alpha = await FakeOpenAi.start(options)
    const config = {
      providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])],
      workspaces: { default: { cache: true } }
    }
    const { gateways: [one, other], close } = await startReplicas({ config })
    try {
      const input = `refreshed ${Crypto.randomUUID()}`
      const first = await one.embed({ model: "acme/embed", input })
      assert.strictEqual(first.headers.get("x-switchyard-cache"), "miss", first.text)
      // The other replica reads it from the store into its memory, then from memory.
      for (let i = 0; i < 2; i++) {
        const hit = await other.embed({ model: "acme/embed", input })
        assert.strictEqual(hit.headers.get("x-switchyard-cache"), "hit", hit.text)
        assert.deepStrictEqual(hit.json.data, first.json.data)
      }
      // The upstream's model changes; a refresh on the first replica writes its new vectors.
      options.revision = "2"
      const refreshed = await one.embed({ model: "acme/embed", input }, { headers: { "x-switchyard-cache": "refresh" } })
      assert.strictEqual(refreshed.status, 200, refreshed.text)
      assert.notDeepEqual(refreshed.json.data, first.json.data)
      // Word of it reaches the other replica within the bound of live changes (one second).
      const deadline = Date.now() + 1_000
      let seen = await other.embed({ model: "acme/embed", input })
      while (Date.now() < deadline && JSON.stringify(seen.json.data) !== JSON.stringify(refreshed.json.data)) {
        await new Promise((resolve) => setTimeout(resolve, 20))
        seen = await other.embed({ model: "acme/embed", input })
      }
      assert.strictEqual(seen.headers.get("x-switchyard-cache"), "hit", seen.text)
      assert.deepStrictEqual(seen.json.data, refreshed.json.data)
      assert.strictEqual(alpha.requests.length, 2)
    } finally {
      await close()
      await alpha.close()
    }
  }, 180_000)
})
