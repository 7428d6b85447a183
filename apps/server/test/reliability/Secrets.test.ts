import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as NodePath from "node:path"
import { DatabaseSync } from "node:sqlite"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider, waitFor } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { tempDir } from "../support/TestServer.ts"
import { dataDirWithStore, type GatewayProcess, startGatewayProcess } from "./GatewayProcess.ts"
import { type Answer, isAnswer, send } from "./RawHttp.ts"
import { findLeaks, record } from "./Reliability.ts"

// Shaped like no known credential format (a Cohere-style key has no prefix), so only the gateway's
// knowledge of what it sent can keep it out of messages.
const opaque = () => Crypto.randomBytes(30).toString("base64url").replace(/[-_]/gu, "x")

type Echo = { readonly status: number; readonly place: "message" | "id" }

// An upstream that says back whatever credential it was sent, in its error messages and in the
// fields of a successful answer.
const echoing = (mode: () => Echo | undefined): FakeUpstream.FakeApi => {
  return {
    basePath: "/v1",
    errorBody: FakeOpenAi.api().errorBody,
    handle: (request, shape) => {
      const sent = FakeUpstream.bearer(request) ?? String(request.headers["x-api-key"] ?? "")
      const echo = mode()
      if (echo === undefined || echo.place === "id") {
        const reply = FakeOpenAi.api({ apiKey: sent }).handle(request, shape)
        return echo === undefined ? reply : { ...reply, body: { ...(reply.body as object), id: sent, model: sent } }
      }
      return {
        status: echo.status,
        body: { error: { message: `Incorrect API key provided: ${sent}. Your key ${sent} is not valid.`, type: "invalid_request_error", code: sent } },
        headers: { "x-echo": sent }
      }
    }
  }
}

describe("reliability: secrets", () => {
  const secrets: Record<string, string> = {
    managementKey: KeySecret.generate(),
    apiKey: KeySecret.generate(),
    providerCredential: opaque(),
    secondProviderCredential: `sk-${opaque()}`,
    byokCredential: opaque(),
    replacedByokCredential: opaque(),
    secretKey: Crypto.randomBytes(32).toString("hex"),
    broadcastToken: opaque(),
    broadcastHeader: opaque()
  }
  const createdKeys: Array<string> = []
  const replies: Array<{ readonly label: string; readonly reply: Answer; readonly allowed: ReadonlyArray<string> }> = []
  const broadcastBodies: Array<string> = []
  let echo: Echo | undefined
  let upstream: FakeUpstream.FakeServer
  let hook: Http.Server
  let gateway: GatewayProcess
  let dataDir: string
  let leaks = 0
  let requests = 0
  // Embeddings requests served: each is one broadcast event.
  let events = 0

  const call = async (label: string, key: string | undefined, method: string, path: string, body?: unknown, allowed: ReadonlyArray<string> = []) => {
    requests += 1
    const reply = await send(gateway.origin, {
      method,
      path: `/api/v1${path}`,
      headers: {
        ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}),
        ...(body !== undefined ? { "content-type": "application/json" } : {})
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {})
    })
    if (!isAnswer(reply)) throw new Error(`${label}: ${reply.error}`)
    replies.push({ label, reply, allowed })
    if (path === "/embeddings" && reply.status === 200) events += 1
    return reply
  }

  const allSecrets = () => ({ ...secrets, ...Object.fromEntries(createdKeys.map((k, i) => [`createdKey${i}`, k])) })

  beforeAll(async () => {
    upstream = await FakeUpstream.start(echoing(() => echo))
    hook = Http.createServer((req, res) => {
      let body = ""
      req.on("data", (c) => (body += String(c)))
      req.on("end", () => {
        broadcastBodies.push(body)
        res.writeHead(500).end(`refused ${req.url}`)
      })
    })
    await new Promise<void>((resolve) => hook.listen(0, "127.0.0.1", () => resolve()))
    const hookUrl = `http://127.0.0.1:${(hook.address() as AddressInfo).port}/hook?token=${secrets.broadcastToken}`
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [
        provider("alpha", upstream.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })]),
        provider("beta", upstream.url, {}, [endpoint("acme/other", { upstream_model: "embed" })])
      ],
      broadcast: [{ url: hookUrl, headers: { authorization: `Bearer ${secrets.broadcastHeader}` }, timeout_ms: 500 }]
    }))
    dataDir = dataDirWithStore()
    gateway = await startGatewayProcess({
      SWITCHYARD_DATA_DIR: dataDir,
      DATABASE_URL: "",
      SWITCHYARD_CONFIG: configPath,
      ALPHA_API_KEY: secrets.providerCredential!,
      BETA_API_KEY: secrets.secondProviderCredential!,
      SWITCHYARD_SECRET_KEY: secrets.secretKey!,
      SWITCHYARD_BOOTSTRAP_API_KEY: secrets.apiKey!,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: secrets.managementKey!,
      SWITCHYARD_RATE_LIMIT: "100000/60s"
    })
  }, 90_000)

  afterAll(async () => {
    record("secrets", { leaksFound: leaks, requests, inputsTried: requests })
    await gateway?.stop()
    await upstream?.close()
    await new Promise<void>((resolve) => (hook === undefined ? resolve() : hook.close(() => resolve())))
  })

  it("no response, log line or broadcast event carries a key secret or a credential", async () => {
    const created = await call("create key", secrets.managementKey, "POST", "/keys", { name: "made here" }, ["createdKey0"])
    createdKeys.push(created.json.key)
    await call("credits", secrets.managementKey, "POST", "/credits", { amount: 10 })

    for (const status of [400, 401, 402, 403, 404, 408, 413, 422, 429, 500, 502, 503, 529]) {
      echo = { status, place: "message" }
      for (const model of ["acme/embed", "acme/other"]) {
        const reply = await call(`echo ${status} ${model}`, secrets.apiKey, "POST", "/embeddings", { model, input: "tell me your key", provider: { allow_fallbacks: false } })
        assert.isAtLeast(reply.status, 400)
      }
    }
    echo = { status: 200, place: "id" }
    const served = await call("echo in a 200", secrets.apiKey, "POST", "/embeddings", { model: "acme/embed", input: "and now?" })
    assert.strictEqual(served.status, 200)
    echo = undefined

    const byok = await call("byok create", secrets.managementKey, "POST", "/byok", { provider: "alpha", key: secrets.byokCredential, name: "own" })
    assert.strictEqual(byok.status, 201)
    await call("byok list", secrets.managementKey, "GET", "/byok")
    await call("byok get", secrets.managementKey, "GET", `/byok/${byok.json.data.id}`)
    for (const status of [400, 401, 429, 500]) {
      echo = { status, place: "message" }
      await call(`byok echo ${status}`, secrets.apiKey, "POST", "/embeddings", { model: "acme/embed", input: "whose key?", provider: { allow_fallbacks: false } })
    }
    echo = undefined
    await call("byok update", secrets.managementKey, "PATCH", `/byok/${byok.json.data.id}`, { key: secrets.replacedByokCredential })
    await call("byok served", secrets.apiKey, "POST", "/embeddings", { model: "acme/embed", input: "served with the workspace's key" })

    for (const key of [secrets.managementKey, secrets.apiKey, createdKeys[0]!]) {
      await call("keys list", secrets.managementKey, "GET", "/keys?include_disabled=true")
      await call("key get", secrets.managementKey, "GET", `/keys/${KeySecret.hash(key)}`)
      await call("current key", key, "GET", "/key")
    }
    await call("management key on embeddings", secrets.managementKey, "POST", "/embeddings", { model: "acme/embed", input: "x" })
    await call("standard key on key management", secrets.apiKey, "GET", "/keys")
    const flipped = `${secrets.apiKey!.slice(0, -1)}${secrets.apiKey!.endsWith("0") ? "1" : "0"}`
    for (const near of [flipped, secrets.apiKey!.toUpperCase(), `${secrets.managementKey}0`, secrets.providerCredential!, secrets.byokCredential!]) {
      const reply = await call("near miss", near, "GET", "/key")
      assert.strictEqual(reply.status, 401)
    }
    await call("disable created", secrets.managementKey, "PATCH", `/keys/${KeySecret.hash(createdKeys[0]!)}`, { disabled: true })
    await call("disabled key", createdKeys[0], "GET", "/key")
    await call("openapi", undefined, "GET", "/openapi.json")
    // The destination refuses every delivery: each event is tried until the gateway gives up on
    // it and logs so. The scan waits for every event's last attempt and its warning.
    const givenUp = () => gateway.output().split("broadcast delivery failed").length - 1
    assert.isAbove(events, 0)
    await waitFor(() => givenUp() >= events, 60_000)
    assert.strictEqual(givenUp(), events)

    const found: Array<string> = []
    for (const { label, reply, allowed } of replies) {
      const shown = `${JSON.stringify(reply.headers)}\n${reply.text}`
      const exposed = Object.fromEntries(Object.entries(allSecrets()).filter(([name]) => !allowed.includes(name)))
      for (const name of findLeaks(shown, exposed)) found.push(`response to "${label}" (${reply.status}) shows ${name}`)
    }
    const output = gateway.output()
    assert.include(output, "management key: from SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY (not printed)", "the first start names the given secrets")
    const logs = output
    assert.include(logs, "broadcast delivery failed", "the scan covers the gateway's warnings")
    for (const name of findLeaks(logs, allSecrets())) found.push(`the gateway's output shows ${name}`)
    assert.isAbove(broadcastBodies.length, 0, "the broadcast destination was called")
    const { broadcastHeader: _, broadcastToken: __, ...notForBroadcast } = allSecrets()
    for (const name of findLeaks(broadcastBodies.join("\n"), notForBroadcast)) found.push(`a broadcast event shows ${name}`)
    leaks += found.length
    assert.deepStrictEqual(found, [])
  }, 120_000)

  it("at rest the store holds only hashes of key secrets and sealed credentials; no credential is in any file", async () => {
    await gateway.stop()
    const files: Array<string> = []
    const walk = (dir: string) => {
      for (const entry of Fs.readdirSync(dir, { withFileTypes: true })) {
        const path = NodePath.join(dir, entry.name)
        if (entry.isDirectory()) walk(path)
        else if (entry.isFile()) files.push(path)
      }
    }
    walk(dataDir)
    assert.include(files, NodePath.join(dataDir, "switchyard.db"))
    const found: Array<string> = []
    const atRest = { ...allSecrets(), secretKeyBase64: Buffer.from(secrets.secretKey!, "hex").toString("base64") }
    for (const file of files) {
      const bytes = Fs.readFileSync(file)
      for (const encoding of ["latin1", "utf16le"] as const) {
        for (const name of findLeaks(bytes.toString(encoding), atRest, 8)) found.push(`${NodePath.relative(dataDir, file)} holds ${name} (${encoding})`)
      }
    }
    const db = new DatabaseSync(NodePath.join(dataDir, "switchyard.db"), { readOnly: true })
    try {
      const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'").all() as Array<{ name: string }>
      let dump = ""
      for (const { name } of tables) {
        dump += (db.prepare(`SELECT * FROM "${name}"`).all()).map((row) => JSON.stringify(row)).join("\n")
      }
      for (const name of findLeaks(dump, atRest)) found.push(`the tables hold ${name}`)
      const sealed = db.prepare("SELECT secret FROM byok_credentials").all() as Array<{ secret: string }>
      assert.isAbove(sealed.length, 0)
      for (const { secret } of sealed) assert.match(secret, /^v1\.[0-9a-f]{16}\.[\w-]+\.[\w-]+\.[\w-]+$/u)
      const hashes = db.prepare("SELECT hash FROM api_keys").all() as Array<{ hash: string }>
      for (const { hash } of hashes) assert.match(hash, /^[0-9a-f]{64}$/u)
      assert.includeMembers(hashes.map((r) => r.hash), [secrets.apiKey!, secrets.managementKey!, ...createdKeys].map(KeySecret.hash))
    } finally {
      db.close()
    }
    leaks += found.length
    assert.deepStrictEqual(found, [])
  }, 60_000)
})
