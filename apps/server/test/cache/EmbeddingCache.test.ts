import { assert, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import { EmbeddingCache, type Entry } from "../../src/cache/EmbeddingCache.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import { sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

const entry = (n: number): Entry => ({ vector: VectorEncoding.fromStored({ encoding: "float", text: `[${n},0.5]`, width: 2 }), tokens: n })

// Built inside each test, so the store reads the test's clock.
const cacheLayer = (env: Record<string, string>) =>
  EmbeddingCache.layer.pipe(
    Layer.provideMerge(sqlLayer()),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ REDIS_URL: "", ...env })))
  )

describe(`embeddings cache store (${storeKind})`, () => {
  it.effect("reads back what it wrote, and nothing after the time to live", () =>
    Effect.gen(function*() {
      const cache = yield* EmbeddingCache
      yield* cache.setMany([["a", entry(1)], ["b", entry(2)]])
      yield* TestClock.adjust("30 seconds")
      yield* cache.setMany([["c", entry(3)]])
      assert.deepStrictEqual(yield* cache.getMany([["a", "b", "c", "d"]]), [[entry(1), entry(2), entry(3), undefined]])
      yield* TestClock.adjust("31 seconds")
      assert.deepStrictEqual(yield* cache.getMany([["a", "b", "c"]]), [[undefined, undefined, entry(3)]])
    }).pipe(Effect.provide(cacheLayer({ SWITCHYARD_CACHE_TTL_SECONDS: "60" }))), 180_000)

  it.effect("keeps at most the configured number of entries, evicting the oldest", () =>
    Effect.gen(function*() {
      const cache = yield* EmbeddingCache
      for (const n of [1, 2, 3, 4, 5]) {
        yield* cache.setMany([[`k${n}`, entry(n)]])
        yield* TestClock.adjust("1 second")
      }
      assert.deepStrictEqual(yield* cache.getMany([["k1", "k2", "k3", "k4", "k5"]]), [[undefined, undefined, entry(3), entry(4), entry(5)]])
    }).pipe(Effect.provide(cacheLayer({ SWITCHYARD_CACHE_MAX_ENTRIES: "3", SWITCHYARD_CACHE_MEMORY_ENTRIES: "0" }))), 180_000)

  it.effect("expired entries leave the table on the schedule, with nothing written since", () =>
    Effect.gen(function*() {
      const cache = yield* EmbeddingCache
      const sql = yield* SqlClient.SqlClient
      const rows = Effect.map(sql<{ n: number }>`SELECT CAST(count(*) AS integer) AS n FROM effect_persistence_embedding_cache`, (r) => r[0]!.n)
      yield* cache.setMany([["e1", entry(1)], ["e2", entry(2)]])
      assert.strictEqual(yield* rows, 2)
      yield* TestClock.adjust("61 seconds")
      // The scheduled eviction woke at one minute and deletes on its own fiber: the count reaches 0.
      assert.strictEqual(yield* rows.pipe(Effect.repeat({ until: (n) => n === 0, times: 1_000 })), 0)
    }).pipe(Effect.provide(cacheLayer({ SWITCHYARD_CACHE_TTL_SECONDS: "30", SWITCHYARD_CACHE_MEMORY_ENTRIES: "0" }))), 180_000)
})

describe("embeddings cache in memory", () => {
  it.effect("serves what it keeps in memory without the store, and what the store has into memory", () =>
    Effect.gen(function*() {
      const cache = yield* EmbeddingCache
      const sql = yield* SqlClient.SqlClient
      yield* cache.setMany([["m1", entry(1)]])
      yield* sql`DELETE FROM effect_persistence_embedding_cache`
      assert.deepStrictEqual(yield* cache.getMany([["m1"]]), [[entry(1)]])
      yield* TestClock.adjust("6 minutes")
      assert.deepStrictEqual(yield* cache.getMany([["m1"]]), [[undefined]])
    }).pipe(Effect.provide(cacheLayer({}))), 180_000)

  it.effect("reads the store only for the groups before the first one memory holds whole", () =>
    Effect.gen(function*() {
      const cache = yield* EmbeddingCache
      // In the store only (memory forgets after its 5 minutes; the store keeps them for the hour).
      yield* cache.setMany([["s1", entry(1)], ["s2", entry(2)]])
      yield* TestClock.adjust("6 minutes")
      // In memory (and the store).
      yield* cache.setMany([["w1", entry(3)]])
      // A group memory holds whole comes first: the store, which holds s1 and s2, is not read.
      assert.deepStrictEqual(yield* cache.getMany([["w1"], ["s1", "s2"]]), [[entry(3)], [undefined, undefined]])
      // A group before it that memory lacks is read from the store.
      assert.deepStrictEqual(yield* cache.getMany([["s1", "s2"], ["w1"]]), [[entry(1), entry(2)], [entry(3)]])
    }).pipe(Effect.provide(cacheLayer({ SWITCHYARD_CACHE_TTL_SECONDS: "3600" }))), 180_000)
})
