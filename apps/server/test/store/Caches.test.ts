import { assert, layer } from "@effect/vitest"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import { Effect, Layer, Option } from "effect"
import { SqlClient } from "effect/sql"
import { TestClock } from "effect/testing"
import * as Crypto from "node:crypto"
import { Workspaces } from "../../src/pipeline/Workspaces.ts"
import * as ApiKeyStoreLive from "../../src/store/keys/ApiKeyStoreLive.ts"
import { seedKey, sqlLayer } from "../support/MoneyStore.ts"
import { storeKind } from "../support/TestServer.ts"

const Live = Layer.mergeAll(ApiKeyStoreLive.layer, Workspaces.layer).pipe(Layer.provideMerge(sqlLayer()))

// The stores' caches run on Effect's clock: the test clock decides when an entry expires.
layer(Live, { timeout: 120_000 })(`the stores' caches (${storeKind})`, (it) => {
  it.effect("a found key is kept for one second; an unknown hash is asked again at once", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const keys = yield* ApiKeyStore
      const seeded = yield* seedKey()
      const first = yield* keys.findByHash(seeded.hash)
      assert.isFalse(Option.getOrThrow(first).disabled)
      // Another replica disables the key: this process sees it once the entry has lived its time.
      yield* sql`UPDATE api_keys SET disabled = TRUE WHERE id = ${seeded.keyId}`
      yield* TestClock.adjust("999 millis")
      assert.isFalse(Option.getOrThrow(yield* keys.findByHash(seeded.hash)).disabled)
      yield* TestClock.adjust("1 millis")
      assert.isTrue(Option.getOrThrow(yield* keys.findByHash(seeded.hash)).disabled)

      const unknown = yield* seedKey({ workspaceId: seeded.workspaceId, userId: seeded.userId })
      yield* sql`UPDATE api_keys SET hash = ${`${unknown.hash}x`} WHERE id = ${unknown.keyId}`
      assert.isTrue(Option.isNone(yield* keys.findByHash(unknown.hash)))
      yield* sql`UPDATE api_keys SET hash = ${unknown.hash} WHERE id = ${unknown.keyId}`
      assert.isTrue(Option.isSome(yield* keys.findByHash(unknown.hash)))
    }))

  it.effect("this process forgets a key it updates", () =>
    Effect.gen(function*() {
      const keys = yield* ApiKeyStore
      const seeded = yield* seedKey()
      assert.isFalse(Option.getOrThrow(yield* keys.findByHash(seeded.hash)).disabled)
      yield* keys.update({ hash: seeded.hash, userId: seeded.userId, now: new Date(), patch: { disabled: true } })
      assert.isTrue(Option.getOrThrow(yield* keys.findByHash(seeded.hash)).disabled)
    }))

  it.effect("a workspace's settings are kept for five seconds or until this process changes them; an unknown workspace is asked again", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const workspaces = yield* Workspaces
      const id = Crypto.randomUUID()
      assert.deepStrictEqual(yield* workspaces.settingsOf(id), { slug: "", cache: null, routing: null })
      yield* sql`INSERT INTO workspaces (id, slug, name) VALUES (${id}, ${`ws-${id}`}, 'Test')`
      assert.deepStrictEqual(yield* workspaces.settingsOf(id), { slug: `ws-${id}`, cache: null, routing: null })
      // Another replica turns the cache on: this process sees it once the entry has lived its time.
      yield* sql`UPDATE workspaces SET cache = TRUE WHERE id = ${id}`
      yield* TestClock.adjust("4 seconds")
      assert.deepStrictEqual(yield* workspaces.settingsOf(id), { slug: `ws-${id}`, cache: null, routing: null })
      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* workspaces.settingsOf(id), { slug: `ws-${id}`, cache: true, routing: null })
      // This process changes it: it forgets what it kept at once.
      yield* sql`UPDATE workspaces SET cache = FALSE WHERE id = ${id}`
      yield* workspaces.forget(id)
      assert.deepStrictEqual(yield* workspaces.settingsOf(id), { slug: `ws-${id}`, cache: false, routing: null })
    }))
})
