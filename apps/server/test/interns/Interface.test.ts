import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Net from "node:net"
import { call, type InternServer, rawRequest, startInternServer } from "./InternServer.ts"

// Sends the head and part of a body, then nothing; resolves with whatever the server answers
// before it closes the connection (an empty string when it closes without an answer).
const stallBody = (server: InternServer, path: string) =>
  new Promise<{ readonly text: string; readonly ms: number }>((resolve, reject) => {
    const url = new URL(`${server.baseUrl}${path}`)
    const started = Date.now()
    const socket = Net.connect(Number(url.port), url.hostname, () => {
      socket.write(
        `PATCH ${url.pathname} HTTP/1.1\r\nHost: ${url.host}\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: 64\r\n\r\n{"description": "half`
      )
    })
    let text = ""
    socket.setEncoding("utf8")
    socket.on("data", (chunk: string) => (text += chunk))
    socket.on("error", reject)
    socket.on("close", () => resolve({ text, ms: Date.now() - started }))
    socket.setTimeout(60_000, () => socket.destroy())
  })

describe("the intern operations, to the letter of the interface", () => {
  let server: InternServer
  let id: string
  let workspaceId: string
  beforeAll(async () => {
    server = await startInternServer({ env: { SWITCHYARD_INTERN_REQUEST_TIMEOUT_MS: "3000" } })
    const created = await call(server, "POST", "/interns", { body: { name: "literal" } })
    id = created.body.id
    workspaceId = created.body.workspace_id
  })
  afterAll(() => server.close())

  it("a PATCH whose body stalls gets 408 in the intern envelope, not a closed connection", async () => {
    const { ms, text } = await stallBody(server, `/interns/${id}`)
    assert.match(text, /^HTTP\/1\.1 408 /u, text)
    const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4))
    assert.strictEqual(body.error.code, 408)
    assert.isString(body.error.message)
    assert.isBelow(ms, 30_000)
    const after = await call(server, "GET", `/interns/${id}`)
    assert.isNull(after.body.description, "nothing of the half body was stored")
  })

  it("provision and suspend take no body: one is invalid_body", async () => {
    for (const [path, body] of [[`/interns/${id}/provision`, "{}"], [`/interns/${id}/suspend`, `{"force":true}`]] as const) {
      const answer = await rawRequest(server, { method: "POST", path, headers: { "content-type": "application/json" }, chunks: [body] })
      assert.strictEqual(answer.status, 400, path)
      assert.strictEqual(answer.body.error.code, "invalid_body")
      assert.include(answer.body.error.message, "takes no request body")
    }
    assert.strictEqual((await call(server, "GET", `/interns/${id}`)).body.status, "stopped", "the refused provision did nothing")
    const bare = await rawRequest(server, { method: "POST", path: `/interns/${id}/suspend`, headers: { "content-length": "0" } })
    assert.strictEqual(bare.status, 200)
    assert.deepStrictEqual(bare.body, { suspended: true })
    const sdkLike = await call(server, "POST", `/interns/${id}/suspend`)
    assert.strictEqual(sdkLike.status, 200)
  })

  it("workspace_id matches the key's workspace whatever the case of its hex digits", async () => {
    const listed = await call(server, "GET", `/interns?workspace_id=${workspaceId.toUpperCase()}`)
    assert.strictEqual(listed.status, 200)
    assert.isTrue(listed.body.data.some((i: { id: string }) => i.id === id))
    const created = await call(server, "POST", "/interns", { body: { name: "upper-case", workspace_id: workspaceId.toUpperCase() } })
    assert.strictEqual(created.status, 201)
    assert.strictEqual(created.body.workspace_id, workspaceId)
  })
})
