import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { capturingStdout } from "../support/CapturedOutput.ts"
import { call, type InternServer, startInternServer } from "./InternServer.ts"

// The intern table is renamed away under the running gateway: every intern statement fails in the
// store while the key check (another table) still answers, so the intern endpoints meet the store
// failure themselves.
const withInternsGone = async <A>(server: InternServer, f: () => Promise<A>): Promise<A> => {
  await server.sql((sql) => sql`ALTER TABLE interns RENAME TO interns_away`)
  try {
    return await f()
  } finally {
    await server.sql((sql) => sql`ALTER TABLE interns_away RENAME TO interns`)
  }
}

const send = async (server: InternServer, method: string, path: string, body?: unknown) => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${server.apiKey}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(20_000)
  })
  return { status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() as any }
}

describe("the intern operations when the store fails", () => {
  let server: InternServer
  let id: string
  beforeAll(async () => {
    server = await startInternServer()
    id = (await call(server, "POST", "/interns", { body: { name: "kept" } })).body.id
  })
  afterAll(() => server.close())

  it("answer 503 in the intern envelope with Retry-After, never internal_error, and serve again once the store does", async () => {
    const requests = [
      () => send(server, "GET", "/interns"),
      () => send(server, "GET", `/interns/${id}`),
      () => send(server, "POST", "/interns", { name: "during-outage" }),
      () => send(server, "PATCH", `/interns/${id}`, { description: "changed" }),
      () => send(server, "POST", `/interns/${id}/suspend`)
    ]
    // The gateway's log lines during the failure are kept here rather than printed: each request
    // must leave exactly one error line that names the store operation and carries the cause.
    const { result: replies, lines } = await capturingStdout(() =>
      withInternsGone(server, () => Promise.all(requests.map((request) => request())))
    )
    const failures = lines.filter((l) => l.status === 503)
    assert.strictEqual(failures.length, requests.length, `one log line per failed request: ${JSON.stringify(failures.map((l) => l.path))}`)
    for (const line of failures) {
      assert.deepInclude(line, { level: "error", message: "request", reason: "store_unavailable" })
      assert.match(line.store_operation, /^interns\./u)
      assert.match(line.cause, /interns/u, "the cause names what failed")
    }
    for (const [i, reply] of replies.entries()) {
      assert.strictEqual(reply.status, 503, `request ${i}: ${JSON.stringify(reply.body)}`)
      assert.deepStrictEqual(reply.body, {
        error: {
          code: 503,
          message: "The gateway's store is unavailable; try again shortly",
          metadata: { reason: "store_unavailable", retryable: true }
        }
      }, `request ${i}`)
      assert.strictEqual(reply.retryAfter, "1", `request ${i} says when to retry`)
    }

    const listed = await send(server, "GET", "/interns")
    assert.strictEqual(listed.status, 200)
    assert.deepStrictEqual(listed.body.data.map((intern: { readonly id: string }) => intern.id), [id], "nothing was created during the failure")
    const got = await send(server, "GET", `/interns/${id}`)
    assert.strictEqual(got.status, 200)
    assert.isNull(got.body.description, "nothing was changed during the failure")
    assert.isNull(got.retryAfter)
  })
})
