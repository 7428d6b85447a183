import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { addUser, call, type InternServer, rawRequest, startInternServer } from "./InternServer.ts"

const recordKeys = [
  "attached_vault_id", "createdAt", "created_at", "description", "hostname", "id", "instructions",
  "lastFailureMessage", "last_failure_message", "model", "name", "progress", "status", "updatedAt",
  "updated_at", "vault_id", "workspaceId", "workspace_id"
]

describe("PATCH /interns/{internId} and the rules around it", () => {
  let server: InternServer
  let id: string
  beforeAll(async () => {
    server = await startInternServer({ env: { SWITCHYARD_REGIONAL_HOSTS: "eu.switchyard.test, AP.switchyard.test" } })
    const created = await call(server, "POST", "/interns", {
      body: { name: "ruler", description: "keeps rules", instructions: "Follow them.", model: "openai/gpt-4o" }
    })
    id = created.body.id
  })
  afterAll(() => server.close())

  it("returns the full record with every key, both spellings, nullable ones as null", async () => {
    const { status, body } = await call(server, "PATCH", `/interns/${id}`, { body: {} })
    assert.strictEqual(status, 200)
    assert.deepStrictEqual(Object.keys(body).sort(), recordKeys)
    assert.strictEqual(body.workspaceId, body.workspace_id)
    assert.strictEqual(body.createdAt, body.created_at)
    assert.strictEqual(body.updatedAt, body.updated_at)
    assert.isNull(body.lastFailureMessage)
    assert.isNull(body.last_failure_message)
    assert.isNull(body.attached_vault_id)
    assert.isNull(body.hostname)
  })

  it("rejects every broken rule with invalid_body and changes nothing", async () => {
    const before = (await call(server, "GET", `/interns/${id}`)).body
    const cases: Array<[string, { body?: unknown; raw?: string }]> = [
      ["name too short", { body: { name: "a" } }],
      ["name too long", { body: { name: "abcdefghijklmnopqr" } }],
      ["name uppercase", { body: { name: "Ruler" } }],
      ["name starts with a digit", { body: { name: "1ruler" } }],
      ["name double hyphen", { body: { name: "ru--ler" } }],
      ["name trailing hyphen", { body: { name: "ruler-" } }],
      ["name underscore", { body: { name: "ru_ler" } }],
      ["name null", { body: { name: null } }],
      ["name number", { body: { name: 12 } }],
      ["description too long", { body: { description: "x".repeat(2001) } }],
      ["description number", { body: { description: 5 } }],
      ["instructions too long", { body: { instructions: "x".repeat(100_001) } }],
      ["instructions object", { body: { instructions: {} } }],
      ["model too long", { body: { model: `v/${"m".repeat(199)}` } }],
      ["model without vendor", { body: { model: "gpt-4o" } }],
      ["model empty variant", { body: { model: "openai/gpt-4o:" } }],
      ["model with spaces", { body: { model: "openai/gpt 4o" } }],
      ["model number", { body: { model: 4 } }],
      ["unknown field", { body: { nmae: "ruler" } }],
      ["array body", { body: [] }],
      ["null body", { raw: "null" }],
      ["not JSON", { raw: "{name: ruler" }]
    ]
    for (const [what, request] of cases) {
      const answer = await call(server, "PATCH", `/interns/${id}`, {
        ...request,
        headers: { "content-type": "application/json" }
      })
      assert.strictEqual(answer.status, 400, `${what}: ${JSON.stringify(answer.body)}`)
      assert.strictEqual(answer.body.error.code, "invalid_body", what)
      assert.isAbove(answer.body.error.message.length, 0, what)
    }
    const after = (await call(server, "GET", `/interns/${id}`)).body
    assert.deepStrictEqual(after, before)
  })

  it("names the broken fields in the message", async () => {
    const answer = await call(server, "PATCH", `/interns/${id}`, { body: { name: "X", model: "nope" } })
    assert.strictEqual(answer.status, 400)
    assert.include(answer.body.error.message, "name must be")
    assert.include(answer.body.error.message, "model must be a model slug")
  })

  it("accepts each limit exactly", async () => {
    const body = {
      name: "abcdefghijklmnopq",
      description: "d".repeat(2000),
      instructions: "i".repeat(100_000),
      model: `v/${"m".repeat(198)}`
    }
    const { status, body: record } = await call(server, "PATCH", `/interns/${id}`, { body })
    assert.strictEqual(status, 200, JSON.stringify(record).slice(0, 300))
    assert.strictEqual(record.name, body.name)
    assert.strictEqual(record.description.length, 2000)
    assert.strictEqual(record.instructions.length, 100_000)
    assert.strictEqual(record.model, body.model)
    const two = await call(server, "PATCH", `/interns/${id}`, { body: { name: "ab", model: "meta-llama/llama-3.1-8b-instruct:free" } })
    assert.strictEqual(two.status, 200)
    assert.strictEqual(two.body.name, "ab")
  })

  it("leaves omitted fields, clears nulls, and a null model means the workspace default", async () => {
    await call(server, "PATCH", `/interns/${id}`, { body: { name: "ruler", description: "kept", instructions: "kept too", model: "openai/gpt-4o" } })
    const cleared = await call(server, "PATCH", `/interns/${id}`, { body: { instructions: null, model: null } })
    assert.strictEqual(cleared.status, 200)
    assert.strictEqual(cleared.body.name, "ruler")
    assert.strictEqual(cleared.body.description, "kept")
    assert.isNull(cleared.body.instructions)
    assert.isNull(cleared.body.model)
    assert.isTrue(cleared.body.updated_at >= cleared.body.created_at)
  })

  it("keeps names unique per creator within the workspace with its own error", async () => {
    const other = (await call(server, "POST", "/interns", { body: { name: "taken" } })).body
    const clash = await call(server, "PATCH", `/interns/${id}`, { body: { name: "taken" } })
    assert.strictEqual(clash.status, 409)
    assert.strictEqual(clash.body.error.code, "name_taken")
    assert.include(clash.body.error.message, "taken")
    const createClash = await call(server, "POST", "/interns", { body: { name: "taken" } })
    assert.strictEqual(createClash.status, 409)
    assert.strictEqual(createClash.body.error.code, "name_taken")
    const self = await call(server, "PATCH", `/interns/${other.id}`, { body: { name: "taken" } })
    assert.strictEqual(self.status, 200)

    const colleague = await addUser(server, { ownWorkspace: false })
    const theirs = await call(server, "POST", "/interns", { key: colleague.key, body: { name: "taken" } })
    assert.strictEqual(theirs.status, 201, JSON.stringify(theirs.body))
    const visible = await call(server, "GET", `/interns/${theirs.body.id}`)
    assert.strictEqual(visible.status, 200)
  })

  it("refuses a body over 1048576 bytes with payload_too_large, with or without Content-Length", async () => {
    const big = JSON.stringify({ instructions: "x".repeat(1_048_600) })
    const declared = await call(server, "PATCH", `/interns/${id}`, { raw: big, headers: { "content-type": "application/json" } })
    assert.strictEqual(declared.status, 413)
    assert.strictEqual(declared.body.error.code, "payload_too_large")
    const chunked = await rawRequest(server, {
      method: "PATCH",
      path: `/interns/${id}`,
      headers: { "content-type": "application/json", "transfer-encoding": "chunked" },
      chunks: Array.from({ length: 18 }, (_, i) => i === 0 ? `{"instructions":"${"x".repeat(65_536)}` : "x".repeat(65_536)).concat(['"}'])
    })
    assert.strictEqual(chunked.status, 413, JSON.stringify(chunked.body))
    assert.strictEqual(chunked.body.error.code, "payload_too_large")
    const after = (await call(server, "GET", `/interns/${id}`)).body
    assert.notStrictEqual(after.instructions?.length, 1_048_600)
  })

  it("refuses a non-JSON content type with 415", async () => {
    const answer = await call(server, "PATCH", `/interns/${id}`, { raw: "name=ruler", headers: { "content-type": "text/plain" } })
    assert.strictEqual(answer.status, 415)
    assert.strictEqual(answer.body.error.code, "unsupported_media_type")
  })

  it("answers not_found for unknown ids and for interns of another workspace, never hinting they exist", async () => {
    const stranger = await addUser(server, { ownWorkspace: true })
    const unknown = await call(server, "PATCH", "/interns/does-not-exist", { body: { name: "abc" } })
    const foreign = await call(server, "PATCH", `/interns/${id}`, { key: stranger.key, body: { name: "abc" } })
    assert.strictEqual(unknown.status, 404)
    assert.strictEqual(foreign.status, 404)
    assert.strictEqual(foreign.body.error.code, "not_found")
    assert.strictEqual(
      foreign.body.error.message.replace(id, "<id>"),
      unknown.body.error.message.replace("does-not-exist", "<id>")
    )
    for (const [method, path] of [["GET", ""], ["POST", "/suspend"], ["POST", "/provision"], ["DELETE", ""]] as const) {
      const answer = await call(server, method, `/interns/${id}${path}`, { key: stranger.key })
      assert.strictEqual(answer.status, 404, `${method} ${path}`)
      assert.strictEqual(answer.body.error.code, "not_found")
    }
    const list = await call(server, "GET", "/interns", { key: stranger.key })
    assert.deepStrictEqual(list.body, { data: [], has_more: false })
    const theirs = await call(server, "POST", "/interns", { key: stranger.key, body: { name: "ruler" } })
    assert.strictEqual(theirs.status, 201)
    const mine = await call(server, "GET", "/interns")
    assert.isFalse(mine.body.data.some((i: any) => i.id === theirs.body.id))
    const other = await call(server, "GET", `/interns?workspace_id=${theirs.body.workspace_id}`)
    assert.strictEqual(other.status, 403)
    assert.strictEqual(other.body.error.code, 403)
    const createThere = await call(server, "POST", "/interns", { body: { name: "intruder", workspace_id: theirs.body.workspace_id } })
    assert.strictEqual(createThere.status, 403)
  })

  it("refuses intern operations on a regional hostname", async () => {
    for (const host of ["eu.switchyard.test", "ap.switchyard.test:8080"]) {
      for (const [method, path] of [["PATCH", `/interns/${id}`], ["POST", `/interns/${id}/suspend`], ["GET", "/interns"]]) {
        const answer = await rawRequest(server, {
          method: method!,
          path: path!,
          headers: { host, "content-type": "application/json" },
          chunks: method === "PATCH" ? ["{}"] : []
        })
        assert.strictEqual(answer.status, 403, `${host} ${method} ${path}`)
        assert.strictEqual(answer.body.error.code, 403)
        assert.strictEqual(answer.body.error.metadata.reason, "regional_host")
        assert.include(answer.body.error.message, "regional hostname")
      }
    }
    const keyless = await rawRequest(server, { method: "GET", path: "/interns", headers: { host: "EU.switchyard.test.", authorization: "" } })
    assert.strictEqual(keyless.status, 403)
    const primary = await rawRequest(server, { method: "GET", path: `/interns/${id}`, headers: { host: "api.switchyard.test" } })
    assert.strictEqual(primary.status, 200)
    const untrusted = await rawRequest(server, {
      method: "GET",
      path: `/interns/${id}`,
      headers: { host: "api.switchyard.test", "x-forwarded-host": "eu.switchyard.test" }
    })
    assert.strictEqual(untrusted.status, 200, "without SWITCHYARD_TRUST_PROXY, X-Forwarded-Host is not believed")
  })

  it("needs an API key", async () => {
    const missing = await call(server, "PATCH", `/interns/${id}`, { key: null, body: {} })
    assert.strictEqual(missing.status, 401)
    assert.strictEqual(missing.body.error.code, 401)
    const wrong = await call(server, "POST", `/interns/${id}/suspend`, { key: "sk-sy-v1-nope-nope-nope-nope" })
    assert.strictEqual(wrong.status, 401)
  })

  it("lists with cursor paging and a status filter", async () => {
    const names = ["page-a", "page-b", "page-c", "page-d", "page-e"]
    for (const name of names) await call(server, "POST", "/interns", { body: { name } })
    const all = (await call(server, "GET", "/interns?limit=100")).body.data.map((i: any) => i.id)
    const seen: Array<string> = []
    let cursor: string | undefined
    for (let page = 0; page < 20; page++) {
      const { status, body } = await call(server, "GET", `/interns?limit=2${cursor ? `&starting_after=${cursor}` : ""}`)
      assert.strictEqual(status, 200)
      assert.isAtMost(body.data.length, 2)
      seen.push(...body.data.map((i: any) => i.id))
      assert.strictEqual(body.has_more, body.next_cursor !== undefined)
      if (!body.has_more) break
      cursor = body.next_cursor
    }
    assert.deepStrictEqual(seen, all)
    assert.deepStrictEqual([...all].sort(), all)
    const stopped = await call(server, "GET", "/interns?status=stopped,running&limit=100")
    assert.strictEqual(stopped.body.data.length, all.length)
    const none = await call(server, "GET", "/interns?status=running")
    assert.deepStrictEqual(none.body.data, [])
    const bad = await call(server, "GET", "/interns?status=sleeping")
    assert.strictEqual(bad.status, 400)
    assert.strictEqual(bad.body.error.code, "invalid_request")
    const badLimit = await call(server, "GET", "/interns?limit=0")
    assert.strictEqual(badLimit.status, 400)
  })
})
