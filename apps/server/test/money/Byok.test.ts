import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import { Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as ByokStoreLive from "../../src/store/credentials/ByokStoreLive.ts"
import { CredentialCipher, fromKey, parseKey } from "../../src/store/credentials/CredentialCipher.ts"
import { freshDatabase, dropDatabase, type RunningServer, startServer, storeKind, tempDir } from "../support/TestServer.ts"

const call = async (server: RunningServer, method: string, path: string, key: string, body?: unknown) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) })
  })
  return { status: response.status, text: await response.text() }
}

const walk = (dir: string): Array<string> =>
  Fs.readdirSync(dir).flatMap((name) => {
    const path = NodePath.join(dir, name)
    return Fs.statSync(path).isDirectory() ? walk(path) : [path]
  })

describe(`BYOK credentials (${storeKind})`, () => {
  const secretKey = Crypto.randomBytes(32).toString("hex")
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_SECRET_KEY: secretKey } })
  })
  afterAll(() => server.close())

  const withByok = <A, E>(f: (byok: ByokStore["Service"]) => Effect.Effect<A, E>) =>
    Effect.flatMap(ByokStore, f).pipe(
      Effect.provide(ByokStoreLive.layer.pipe(Layer.provide(Layer.succeed(CredentialCipher, fromKey(parseKey(secretKey)!)))))
    )

  it("stores the secret encrypted, never returns it, and hands it to the executor only as Redacted", async () => {
    const secret = `sk-live-${Crypto.randomBytes(24).toString("hex")}`
    const created = await call(server, "POST", "/byok", server.managementKey, { provider: "voyageai", key: secret })
    assert.strictEqual(created.status, 201)
    assert.notInclude(created.text, secret)
    const { id, workspace_id } = JSON.parse(created.text).data as { id: string; workspace_id: string }
    const listed = await call(server, "GET", "/byok", server.managementKey)
    assert.notInclude(listed.text, secret)
    const stored = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ secret: string }>`SELECT secret FROM byok_credentials WHERE id = ${id}`
    }))
    assert.notInclude(stored[0]!.secret, secret)
    assert.match(stored[0]!.secret, /^v1\.[0-9a-f]{16}\./)
    const found = await server.run(withByok((byok) =>
      Effect.all({ hit: byok.credentialFor(workspace_id, "voyageai"), miss: byok.credentialFor(workspace_id, "openai") })
    ))
    assert.isTrue(Option.isSome(found.hit))
    const redacted = Option.getOrThrow(found.hit)
    assert.strictEqual(Redacted.value(redacted), secret)
    assert.notInclude(String(redacted), secret)
    assert.notInclude(JSON.stringify(redacted), secret)
    assert.isTrue(Option.isNone(found.miss))

    await call(server, "PATCH", `/byok/${id}`, server.managementKey, { disabled: true })
    const disabled = await server.run(withByok((byok) => byok.credentialFor(workspace_id, "voyageai")))
    assert.isTrue(Option.isNone(disabled))
    if (storeKind === "sqlite") {
      for (const file of walk(server.dataDir)) assert.strictEqual(Fs.readFileSync(file).indexOf(secret), -1, file)
    }
  })

  it("a ciphertext moved to another row does not open", async () => {
    const a = JSON.parse((await call(server, "POST", "/byok", server.managementKey, { provider: "cohere", key: "first-secret-value-1234" })).text).data
    const b = JSON.parse((await call(server, "POST", "/byok", server.managementKey, { provider: "mistral", key: "second-secret-value-5678" })).text).data
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`UPDATE byok_credentials SET secret = (SELECT secret FROM byok_credentials WHERE id = ${a.id}) WHERE id = ${b.id}`
    }))
    const exit = await server.run(Effect.exit(withByok((byok) => byok.credentialFor(b.workspace_id, "mistral"))))
    assert.strictEqual(exit._tag, "Failure")
    await call(server, "DELETE", `/byok/${b.id}`, server.managementKey)
    await call(server, "DELETE", `/byok/${a.id}`, server.managementKey)
  })

  it("refuses the SDK fields Switchyard does not implement, bad providers and standard keys", async () => {
    for (const [body, field] of [
      [{ provider: "openai", key: "k", is_byok_only: true }, "is_byok_only"],
      [{ provider: "openai", key: "k", allowed_models: ["a/b"] }, "allowed_models"],
      [{ provider: "Not A Slug", key: "k" }, "provider"],
      [{ provider: "openai", key: "" }, "key"]
    ] as const) {
      const response = await call(server, "POST", "/byok", server.managementKey, body)
      assert.strictEqual(response.status, 400, JSON.stringify(body))
      assert.include(JSON.parse(response.text).error.message, field)
    }
    const allowed = await call(server, "POST", "/byok", server.managementKey, { provider: "openai", key: "some-key-value-0000", is_byok_only: false, allowed_models: null })
    assert.strictEqual(allowed.status, 201)
    await call(server, "DELETE", `/byok/${JSON.parse(allowed.text).data.id}`, server.managementKey)
    assert.strictEqual((await call(server, "GET", "/byok", server.apiKey)).status, 403)
    assert.strictEqual((await call(server, "GET", `/byok/${Crypto.randomUUID()}`, server.managementKey)).status, 404)
  })
})

describe("the credential key", () => {
  it.skipIf(storeKind !== "postgres")("is required with DATABASE_URL: replicas must share it", async () => {
    const databaseUrl = await freshDatabase()
    try {
      const refused = await startServer({ databaseUrl, env: { SWITCHYARD_SECRET_KEY: "" } }).then(
        (s) => s.close().then(() => undefined),
        (e: unknown) => e
      )
      assert.include(String(refused), "SWITCHYARD_SECRET_KEY is required with DATABASE_URL")
    } finally {
      await dropDatabase(databaseUrl)
    }
  })

  it.skipIf(storeKind === "postgres")("on the embedded store, is generated once into the data dir with mode 0600 and reused after a restart", async () => {
    const dataDir = tempDir("secret")
    const options = { dataDir }
    {
      const first = await startServer(options)
      const file = NodePath.join(dataDir, "secret.key")
      const key = Fs.readFileSync(file, "utf8")
      assert.strictEqual(Fs.statSync(file).mode & 0o777, 0o600)
      assert.strictEqual(parseKey(key)?.length, 32)
      assert.strictEqual((await call(first, "POST", "/byok", first.managementKey, { provider: "openai", key: "abcdefghijklmnopqrstuvwxyz" })).status, 201)
      await first.close()
      const second = await startServer(options)
      assert.strictEqual(Fs.readFileSync(file, "utf8"), key)
      await second.close()
      const refused = await startServer({ ...options, env: { SWITCHYARD_SECRET_KEY: Crypto.randomBytes(32).toString("base64") } }).then(
        (s) => s.close().then(() => undefined),
        (e: unknown) => e
      )
      assert.include(String(refused), "SWITCHYARD_SECRET_KEY")
    }
  })

  it("refuses a malformed SWITCHYARD_SECRET_KEY at startup", async () => {
    const error = await startServer({ env: { SWITCHYARD_SECRET_KEY: "too-short" } }).then(
      (s) => s.close().then(() => undefined),
      (e: unknown) => e
    )
    assert.include(String(error), "SWITCHYARD_SECRET_KEY must be 32 bytes")
  })
})
