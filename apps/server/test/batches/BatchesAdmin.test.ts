import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import OpenAI, { toFile } from "openai"
import { endpoint, type Gateway, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"

const line = (customId: string) =>
  JSON.stringify({ custom_id: customId, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: `text ${customId}` } })

// An operator oversees batches with management keys: the workspace's, and an instance
// administrator's across workspaces.
describe("batches seen and stopped by management keys", () => {
  let gateway: Gateway
  let alpha: FakeUpstream.FakeServer
  let release = () => {}
  let teamId: string
  let teamManager: string
  let teamClient: OpenAI

  beforeAll(async () => {
    alpha = await FakeOpenAi.start()
    gateway = await startGateway({
      config: { providers: [provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })])] },
      credits: 10,
      env: { SWITCHYARD_BATCH_POLL_MS: "100", SWITCHYARD_BATCH_UNIT_LINES: "4" }
    })
    const operator = gateway.server.managementKey
    const team = await gateway.call("/workspaces", { name: "Team C", slug: "team-c" }, { key: operator })
    assert.strictEqual(team.status, 201, team.text)
    teamId = team.json.data.id
    const key = await gateway.call("/keys", { name: "C app", workspace_id: teamId }, { key: operator })
    teamClient = new OpenAI({ apiKey: key.json.key, baseURL: gateway.server.baseUrl, maxRetries: 0 })
    const manager = await gateway.call("/keys", { name: "C manager", workspace_id: teamId, kind: "management" }, { key: operator })
    assert.isBelow(manager.status, 300, manager.text)
    teamManager = manager.json.key
  })
  afterAll(async () => {
    release()
    await gateway?.close()
    await alpha?.close()
  })

  it("lists, reads and cancels a running batch with the workspace's management key and an administrator's; the cancel is an audit entry", async () => {
    // The upstream holds every call: the batch stays in progress until it is cancelled.
    alpha.setBehaviour({ _tag: "Held", until: new Promise<void>((resolve) => (release = resolve)) })
    const input = Array.from({ length: 40 }, (_, i) => line(`c-${i}`)).join("\n")
    const file = await teamClient.files.create({ file: await toFile(Buffer.from(input), "c.jsonl"), purpose: "batch" })
    const batch = await teamClient.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })

    // The workspace's management key: its workspace's batches.
    const listed = await gateway.call("/batches", undefined, { key: teamManager })
    assert.strictEqual(listed.status, 200, listed.text)
    assert.deepStrictEqual(listed.json.data.map((b: { id: string }) => b.id), [batch.id])
    assert.strictEqual((await gateway.call(`/batches/${batch.id}`, undefined, { key: teamManager })).json.id, batch.id)
    // Another workspace's management key (not an administrator's) cannot name it, nor list that workspace.
    const outsider = await gateway.call("/workspaces", { name: "Team D", slug: "team-d" }, { key: gateway.server.managementKey })
    const outsiderKey = (await gateway.call("/keys", { name: "D manager", workspace_id: outsider.json.data.id, kind: "management" }, { key: gateway.server.managementKey })).json.key
    assert.strictEqual((await gateway.call(`/batches/${batch.id}`, undefined, { key: outsiderKey })).status, 404)
    assert.strictEqual((await gateway.call(`/batches?workspace_id=${teamId}`, undefined, { key: outsiderKey })).status, 404)
    assert.deepStrictEqual((await gateway.call("/batches", undefined, { key: outsiderKey })).json.data, [])

    // The instance administrator: every workspace's, filtered by workspace_id.
    const admin = gateway.server.managementKey
    assert.include((await gateway.call("/batches", undefined, { key: admin })).json.data.map((b: { id: string }) => b.id), batch.id)
    assert.deepStrictEqual((await gateway.call(`/batches?workspace_id=${teamId}`, undefined, { key: admin })).json.data.map((b: { id: string }) => b.id), [batch.id])

    const cancelled = await gateway.call(`/batches/${batch.id}/cancel`, {}, { key: admin })
    assert.strictEqual(cancelled.status, 200, cancelled.text)
    assert.include(["cancelling", "cancelled"], cancelled.json.status)
    release()
    const entries = (await gateway.call("/audit-log?action=batch.cancel", undefined, { key: admin })).json.data
    assert.strictEqual(entries.length, 1, JSON.stringify(entries))
    assert.deepInclude(entries[0], { action: "batch.cancel", target: { type: "batch", id: batch.id }, workspace_id: teamId })
    // Cancelling again changes nothing and writes nothing.
    assert.strictEqual((await gateway.call(`/batches/${batch.id}/cancel`, {}, { key: teamManager })).status, 200)
    assert.strictEqual((await gateway.call("/audit-log?action=batch.cancel", undefined, { key: admin })).json.data.length, 1)
    // A standard key still creates and sees only its own workspace's batches.
    assert.deepStrictEqual((await gateway.call("/batches", undefined, {})).json.data, [])
  })
})
