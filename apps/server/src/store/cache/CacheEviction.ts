/**
 * The embeddings cache's evictions, in the store that holds its entries: SQL statements on the
 * gateway's database (the persistence table `effect_persistence_<store id>`), commands on Redis.
 */
import { Effect } from "effect"
import type { Persistence } from "effect/persistence"
import { Redis } from "effect/persistence/Redis"
import { SqlClient, type Statement } from "effect/sql"

/**
 * Removes what is over the size bound, oldest first, from one kind of store; `written` are the
 * keys set since the last call, with the time they were set.
 */
export type Evict<R> = Effect.Effect<
  (
    store: Persistence.BackingPersistenceStore,
    bound: { readonly maxEntries: number; readonly ttlMillis: number },
    written: ReadonlyArray<string>,
    now: number
  ) => Effect.Effect<void, unknown>,
  never,
  R
>

/** The most entries one eviction statement (or Redis command) removes. */
const evictBatch = 1_000

// Every entry lives as long as every other, so the oldest are those that expire first. Both
// statements walk the index on `(expires, id)` (migration `0012_ledger_retention`) from one end,
// and delete a batch at a time: the expired from its start; past the bound, everything up to the
// first entry beyond the newest `maxEntries`, found by walking it from the end.
export const sql = (storeId: string): Evict<SqlClient.SqlClient> => Effect.gen(function*() {
  const sql = (yield* SqlClient.SqlClient).withoutTransforms()
  const table = sql(`effect_persistence_${storeId}`)
  const deleteUpTo = (where: Statement.Fragment) =>
    Effect.gen(function*() {
      while (true) {
        const gone = yield* sql`DELETE FROM ${table}
          WHERE id IN (SELECT id FROM ${table} WHERE ${where} ORDER BY expires, id LIMIT ${evictBatch})
          RETURNING 1 AS n`
        if (gone.length < evictBatch) return
      }
    })
  return (_store, bound, _written, now) =>
    Effect.gen(function*() {
      yield* deleteUpTo(sql`expires <= ${now}`)
      const edge = yield* sql<{ expires: string; id: string }>`SELECT CAST(expires AS text) AS expires, id FROM ${table}
        ORDER BY expires DESC, id DESC LIMIT 1 OFFSET ${bound.maxEntries}`
      const first = edge[0]
      if (first !== undefined) yield* deleteUpTo(sql`(expires, id) <= (CAST(${first.expires} AS bigint), ${first.id})`)
    })
})

// Redis drops expired values by itself; a sorted set of keys by write time finds the oldest.
const redisIndex = "switchyard:embedding_cache:written"
export const redis: Evict<Redis> = Effect.gen(function*() {
  const redis = yield* Redis
  return (store, bound, written, now) =>
    Effect.gen(function*() {
      if (written.length > 0) {
        yield* redis.send("ZADD", redisIndex, ...written.flatMap((key) => [String(now), key]))
      }
      yield* redis.send("ZREMRANGEBYSCORE", redisIndex, "-inf", String(now - bound.ttlMillis))
      let over = Number(yield* redis.send<number>("ZCARD", redisIndex)) - bound.maxEntries
      while (over > 0) {
        const oldest = yield* redis.send<ReadonlyArray<string>>("ZRANGE", redisIndex, "0", String(Math.min(over, evictBatch) - 1))
        if (oldest.length === 0) return
        yield* Effect.forEach(oldest, (key) => store.remove(key), { discard: true })
        yield* redis.send("ZREM", redisIndex, ...oldest)
        over -= oldest.length
      }
    })
})
