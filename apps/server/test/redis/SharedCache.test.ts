import { assert, describe, it } from "@effect/vitest"
import * as Crypto from "node:crypto"
import { ConfigProvider, Effect, Layer } from "effect"
import { Redis } from "effect/persistence/Redis"
import { EmbeddingCache, type Entry } from "../../src/cache/EmbeddingCache.ts"
import * as VectorEncoding from "../../src/providers/VectorEncoding.ts"
import * as RedisConnection from "../../src/store/redis/RedisConnection.ts"
import { StoreChanges } from "../../src/store/sql/StoreChanges.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import { endpoint, provider, startReplicas } from "../embeddings/Gateway.ts"

const redisUrl = process.env.REDIS_URL

describe.skipIf(redisUrl === undefined)("embeddings cache shared through Redis", () => {
  it("an item one replica embedded is a hit on the other; the upstream is called once", async () => {
    const alpha = await FakeOpenAi.start()
    const config = {
      providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })])],
      workspaces: { default: { cache: true } }
    }
    // Replicas share one database (so one workspace) and one Redis.
    const { gateways, close } = await startReplicas({ config, env: { REDIS_URL: redisUrl! } })
    try {
      const input = [`shared ${Crypto.randomUUID()}`]
      const first = await gateways[0]!.embed({ model: "acme/embed", input })
      assert.strictEqual(first.status, 200, first.text)
      assert.strictEqual(first.headers.get("x-switchyard-cache"), "miss")
      assert.strictEqual(alpha.requests.length, 1)
      const second = await gateways[1]!.embed({ model: "acme/embed", input })
      assert.strictEqual(second.status, 200, second.text)
      assert.strictEqual(second.headers.get("x-switchyard-cache"), "hit")
      assert.strictEqual(alpha.requests.length, 1)
      assert.deepStrictEqual(second.json.data, first.json.data)
    } finally {
      await close()
      await alpha.close()
    }
  }, 180_000)
})

describe.skipIf(redisUrl === undefined)("embeddings cache store in Redis", () => {
  const entry = (n: number): Entry => ({ vector: VectorEncoding.fromStored({ encoding: "base64", text: "AAAAAA==", width: 1 }), tokens: n })
  const env = ConfigProvider.layer(ConfigProvider.fromEnvRecord({ REDIS_URL: redisUrl ?? "", SWITCHYARD_CACHE_MAX_ENTRIES: "3", SWITCHYARD_CACHE_MEMORY_ENTRIES: "0" }))

  // Write times in Redis's index are milliseconds; keys of one run sort in write order, which
  // breaks ties between writes of the same millisecond the same way.
  it.live("keeps at most the configured number of entries, evicting the oldest", () =>
    Effect.gen(function*() {
      const redis = yield* Redis
      yield* redis.send("DEL", "switchyard:embedding_cache:written")
      const cache = yield* EmbeddingCache
      const run = Crypto.randomUUID()
      const keys = [1, 2, 3, 4, 5].map((n) => `evict-${run}-${n}`)
      for (const [n, key] of keys.entries()) {
        yield* cache.setMany([[key, entry(n)]])
      }
      const [found] = yield* cache.getMany([keys])
      assert.deepStrictEqual(found!.map((e) => e?.tokens), [undefined, undefined, 2, 3, 4])
    }).pipe(Effect.provide(Layer.merge(EmbeddingCache.layerRedis, RedisConnection.layer).pipe(Layer.provide([env, StoreChanges.layer])))), 60_000)
})
