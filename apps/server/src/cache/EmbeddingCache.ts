import { Clock, Config, Context, Duration, Effect, Layer, Option } from "effect"
import { Persistence } from "effect/persistence"
import * as MemoryBudget from "../http/MemoryBudget.ts"
import * as VectorEncoding from "../providers/VectorEncoding.ts"
import * as CacheEviction from "../store/cache/CacheEviction.ts"
import * as RedisConnection from "../store/redis/RedisConnection.ts"
import { StoreChanges } from "../store/sql/StoreChanges.ts"
import * as Workers from "../Workers.ts"
import * as MemoryTier from "./MemoryTier.ts"

/**
 * One cached vector, kept as the bytes an answer splices in, and the prompt tokens its input was
 * billed for when it was embedded. The store holds it as {@link VectorEncoding.Stored} text.
 */
export interface Entry {
  readonly vector: VectorEncoding.ForwardedVector
  readonly tokens: number
}

export const CacheConfig = Config.all({
  ttlSeconds: Config.Int("SWITCHYARD_CACHE_TTL_SECONDS").pipe(Config.withDefault(7 * 24 * 3600)),
  maxEntries: Config.Int("SWITCHYARD_CACHE_MAX_ENTRIES").pipe(Config.withDefault(100_000)),
  // The memory tier's bound in bytes; by default from the cgroup memory limit (MemoryTier.ts).
  memoryBytes: Config.option(Config.Int("SWITCHYARD_CACHE_MEMORY_BYTES")),
  // Deprecated: `0` still turns the memory tier off; another value bounds its entries as well.
  memoryEntries: Config.option(Config.Int("SWITCHYARD_CACHE_MEMORY_ENTRIES")),
  // The processes that share the container's memory (`SWITCHYARD_WORKERS`), each with its own tier.
  workers: Workers.count
})

/**
 * The memory tier's bounds from the config: its bytes (the configured, else the default for this
 * process's memory limit) and its entries (deprecated; none unless configured). 0 turns it off.
 */
export const memoryBounds = (config: Config.Success<typeof CacheConfig>) => ({
  maxBytes: Option.getOrElse(config.memoryBytes, () => {
    const limit = MemoryBudget.readLimit()
    return MemoryTier.defaultBytes(limit === undefined ? undefined : Math.floor(limit / config.workers))
  }),
  maxEntries: Option.getOrUndefined(config.memoryEntries)
})

// Time between two scheduled evictions (beside the one after every hundredth of the bound in writes).
const evictInterval = Duration.minutes(1)

// How long an entry stays in this process's memory. A `refresh` on another replica drops its keys
// here as soon as the word of it arrives (StoreChanges.ts: PostgreSQL's NOTIFY); this bounds how
// long a word lost, or never sent (Redis, or SQLite's workers), leaves an entry stale.
const memoryTtl = Duration.minutes(5)

/**
 * The embeddings cache's entries by key, with a time to live and a size bound (the oldest go
 * first). The entries live in Effect's persistence store: the gateway's own database by default,
 * Redis when `REDIS_URL` is set, so replicas share them; the most recently used are also kept in
 * this process's memory. A store that fails reads as a miss and drops the write: the cache never
 * fails a request.
 */
export class EmbeddingCache extends Context.Service<EmbeddingCache, {
  /**
   * The entries of groups of keys (a group: the items of a request at one endpoint), in one read of
   * the store. Memory is read first; the store is read only for the groups before the first group
   * memory holds whole: that group serves its request, so the groups after it are given as memory
   * has them.
   */
  readonly getMany: (groups: ReadonlyArray<ReadonlyArray<string>>) => Effect.Effect<ReadonlyArray<ReadonlyArray<Entry | undefined>>>
  /**
   * `true` when the store took the entries; `false` (logged) when it failed. With `replace` (a
   * `refresh`), the entries may differ from what other processes hold in memory: once the store
   * took them, their keys are announced as changed, and every process drops them from memory.
   */
  readonly setMany: (
    entries: ReadonlyArray<readonly [key: string, entry: Entry]>,
    options?: { readonly replace: boolean }
  ) => Effect.Effect<boolean>
}>()("@switchyard/server/cache/EmbeddingCache") {
  /** In Redis, shared by every replica that names it. */
  static readonly layerRedis = Layer.suspend(() =>
    layerWith(CacheEviction.redis).pipe(Layer.provide(Persistence.layerBackingRedis), Layer.provide(RedisConnection.layer))
  )

  /** In the gateway's own database. */
  static readonly layerSql = Layer.suspend(() => layerWith(CacheEviction.sql(storeId)).pipe(Layer.provide(Persistence.layerBackingSqlMultiTable)))

  /** In Redis when `REDIS_URL` is set, in the database otherwise. */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    return (yield* RedisConnection.configured) ? EmbeddingCache.layerRedis : EmbeddingCache.layerSql
  }))
}

const storeId = "embedding_cache"

const layerWith = <R>(evict: CacheEviction.Evict<R>) =>
  Layer.effect(
    EmbeddingCache,
    Effect.gen(function*() {
      const config = yield* CacheConfig
      const backing = yield* Persistence.BackingPersistence
      const store = yield* backing.make(storeId)
      const evictOverflow = yield* evict
      const ttl = Duration.seconds(config.ttlSeconds)
      const clock = yield* Clock.Clock
      const origin = clock.currentTimeMillisUnsafe() - 1
      const memory = MemoryTier.make<Entry>({
        ...memoryBounds(config),
        ttlMillis: Duration.toMillis(Duration.min(ttl, memoryTtl)),
        // From 1 at the start: the tier reads a time of 0 as "no time to live" (a test's clock starts at 0).
        now: () => clock.currentTimeMillisUnsafe() - origin
      })
      const changes = yield* StoreChanges
      yield* changes.listen((change) => change._tag === "CacheEntries" ? Effect.sync(() => memory.drop(change.keys)) : Effect.void)
      // The bound is checked after every hundredth of its size in writes, not after each one.
      const evictEvery = Math.max(1, Math.floor(config.maxEntries / 100))
      let pending: Array<string> = []
      // Redis's outages are announced once by its connection (RedisConnection.ts), not per request:
      // while it is down the store is not asked at all, and a failure reads as a miss quietly.
      const redis = Option.getOrUndefined(yield* Effect.serviceOption(RedisConnection.RedisStatus))
      const storeDown = () => redis?.state() === "down"
      const warn = (what: string) => (cause: unknown) =>
        (redis === undefined ? Effect.logWarning : Effect.logDebug)(
          `embeddings cache: ${what} failed; the request goes on without it`
        ).pipe(Effect.annotateLogs({ cause: String(cause) }))

      const fromStore = (keys: ReadonlyArray<string>) =>
        keys.length === 0 || storeDown()
          ? Effect.succeed(keys.map(() => undefined))
          : store.getMany(keys as [string, ...Array<string>]).pipe(
            Effect.map((values) => values.map(asEntry)),
            Effect.catch((cause) => Effect.as(warn("reading")(cause), keys.map(() => undefined)))
          )

      const getMany = (groups: ReadonlyArray<ReadonlyArray<string>>) =>
        Effect.gen(function*() {
          const found: Array<Array<Entry | undefined>> = []
          // Where each key memory lacks sits, in the groups that need the store.
          const absent: Array<readonly [group: number, item: number]> = []
          let whole = false
          for (const [g, keys] of groups.entries()) {
            const entries: Array<Entry | undefined> = []
            const missing: Array<readonly [number, number]> = []
            for (const [i, key] of keys.entries()) {
              const entry = memory.get(key)
              entries.push(entry)
              if (entry === undefined) missing.push([g, i])
            }
            found.push(entries)
            if (whole) continue
            if (missing.length === 0 && keys.length > 0) whole = true
            else absent.push(...missing)
          }
          if (absent.length === 0) return found
          const stored = yield* fromStore(absent.map(([g, i]) => groups[g]![i]!))
          for (const [j, entry] of stored.entries()) {
            if (entry === undefined) continue
            const [g, i] = absent[j]!
            found[g]![i] = entry
            memory.set(groups[g]![i]!, entry)
          }
          return found
        })

      const evictNow = Effect.gen(function*() {
        const written = pending
        pending = []
        if (storeDown()) return
        const now = yield* Clock.currentTimeMillis
        yield* evictOverflow(store, { maxEntries: config.maxEntries, ttlMillis: config.ttlSeconds * 1000 }, written, now)
      }).pipe(Effect.catch(warn("evicting")))
      const evictIfDue = Effect.suspend(() => (pending.length < evictEvery ? Effect.void : evictNow))
      // And on a schedule: expired entries go even when nothing is written any more.
      yield* evictNow.pipe(Effect.delay(evictInterval), Effect.forever, Effect.forkScoped)

      const setMany = (entries: ReadonlyArray<readonly [string, Entry]>, options?: { readonly replace: boolean }) =>
        Effect.gen(function*() {
          if (entries.length === 0) return true
          const remember = () => {
            for (const [key, entry] of entries) memory.set(key, entry)
          }
          if (storeDown()) {
            remember()
            return false
          }
          const stored = yield* store.setMany(entries.map(([key, entry]) => [key, toPersisted(entry), ttl] as const) as [
            readonly [string, object, Duration.Duration],
            ...Array<readonly [string, object, Duration.Duration]>
          ]).pipe(
            Effect.as(true),
            Effect.catch((cause) => Effect.as(warn("writing")(cause), false))
          )
          // Announced before this process keeps them: its own listener drops the keys as well.
          if (stored && options?.replace === true) yield* changes.changed({ _tag: "CacheEntries", keys: entries.map(([key]) => key) })
          remember()
          if (!stored) return false
          pending.push(...entries.map(([key]) => key))
          yield* evictIfDue
          return true
        })

      return EmbeddingCache.of({ getMany, setMany })
    })
  )

// What the store holds for an entry: plain data, its vector as text.
interface Persisted {
  readonly vector: VectorEncoding.Stored
  readonly tokens: number
}

const toPersisted = (entry: Entry): Persisted => ({ vector: VectorEncoding.toStored(entry.vector), tokens: entry.tokens })

const asEntry = (value: object | undefined): Entry | undefined => {
  if (value === undefined) return undefined
  const entry = value as Partial<Persisted>
  const vector = entry.vector
  return vector !== undefined && typeof vector.text === "string" && typeof vector.width === "number" &&
      (vector.encoding === "float" || vector.encoding === "base64") && typeof entry.tokens === "number"
    ? { vector: VectorEncoding.fromStored(vector), tokens: entry.tokens }
    : undefined
}
