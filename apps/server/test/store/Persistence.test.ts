import { assert, describe, it } from "@effect/vitest"
import { rmSync } from "node:fs"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { freshDatabase, startServer, storeKind, tempDir, dropDatabase } from "../support/TestServer.ts"

const listNames = async (baseUrl: string, key: string) => {
  const response = await fetch(`${baseUrl}/keys`, { headers: { authorization: `Bearer ${key}` } })
  return { status: response.status, body: await response.json() as { data?: Array<{ name: string; hash: string }> } }
}

describe(`store (${storeKind})`, () => {
  it("keeps keys across a restart and bootstraps only once", async () => {
    const dataDir = tempDir("restart")
    const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
    const options = { dataDir, ...(databaseUrl !== undefined ? { databaseUrl } : {}) }
    const first = await startServer(options)
    const before = await listNames(first.baseUrl, first.managementKey)
    await first.close()

    const second = await startServer({
      ...options,
      env: { SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: KeySecret.generate(), SWITCHYARD_BOOTSTRAP_API_KEY: KeySecret.generate() }
    })
    try {
      const after = await listNames(second.baseUrl, first.managementKey)
      assert.strictEqual(after.status, 200)
      assert.deepStrictEqual(after.body.data, before.body.data)
      const ignored = await listNames(second.baseUrl, second.managementKey)
      assert.strictEqual(ignored.status, 401)
    } finally {
      await second.close()
      if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
      rmSync(dataDir, { recursive: true, force: true })
    }
  })

  it("stores only hashes of key secrets", async () => {
    // A data directory of the test's own, read after the server closed.
    const dataDir = tempDir("hashes")
    const server = await startServer({ dataDir })
    try {
      const listed = await listNames(server.baseUrl, server.managementKey)
      const hashes = listed.body.data!.map((k) => k.hash).sort()
      assert.deepStrictEqual(hashes, [KeySecret.hash(server.managementKey), KeySecret.hash(server.apiKey)].sort())
    } finally {
      await server.close()
    }
    if (storeKind === "sqlite") {
      const { readdirSync, readFileSync, statSync } = await import("node:fs")
      const { join } = await import("node:path")
      const walk = (dir: string): Array<string> =>
        readdirSync(dir).flatMap((name) => {
          const path = join(dir, name)
          return statSync(path).isDirectory() ? walk(path) : [path]
        })
      for (const file of walk(server.dataDir)) {
        const content = readFileSync(file)
        assert.strictEqual(content.indexOf(server.managementKey), -1, file)
        assert.strictEqual(content.indexOf(server.apiKey), -1, file)
      }
    }
    rmSync(dataDir, { recursive: true, force: true })
  })
})
