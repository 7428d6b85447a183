import { OpenRouter } from "@openrouter/sdk"
import { InternLifecycleError } from "@openrouter/sdk/models/errors"
import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { type InternServer, startInternServer } from "../interns/InternServer.ts"

const failure = (promise: Promise<unknown>) =>
  promise.then(
    (value) => {
      throw new Error(`expected a failure, got ${JSON.stringify(value)}`)
    },
    (error: unknown) => error
  )

const until = async <A>(read: () => Promise<A>, done: (a: A) => boolean) => {
  const deadline = Date.now() + 15_000
  for (;;) {
    const value = await read()
    if (done(value)) return value
    if (Date.now() > deadline) throw new Error(`still ${JSON.stringify(value)}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}

describe("@openrouter/sdk against Switchyard: interns", () => {
  let server: InternServer
  let client: OpenRouter
  beforeAll(async () => {
    server = await startInternServer({ env: { SWITCHYARD_INTERN_STEP_DELAY_MS: "100" } })
    client = new OpenRouter({ apiKey: server.apiKey, serverURL: server.baseUrl, retryConfig: { strategy: "none" } })
  })
  afterAll(() => server.close())

  it("runs the whole lifecycle through the SDK's own validation", async () => {
    const created = await client.interns.createIntern({
      createInternRequest: { name: "sdk-scout", description: "from the SDK", instructions: "Be useful." }
    })
    assert.strictEqual(created.name, "sdk-scout")
    assert.strictEqual(created.status, "stopped")
    assert.strictEqual(created.lastFailureMessage, null)
    assert.match(created.workspaceId, /^[0-9a-f-]{36}$/)
    assert.isString(created.createdAt)

    const fetched = await client.interns.getIntern({ internId: created.id })
    assert.strictEqual(fetched.id, created.id)

    const provisioning = await client.interns.provisionIntern({ internId: created.id })
    assert.deepStrictEqual(provisioning, { provisioning: true })
    const busy = await failure(client.interns.suspendIntern({ internId: created.id }))
    assert.instanceOf(busy, InternLifecycleError)
    assert.strictEqual((busy as InternLifecycleError).statusCode, 409)
    assert.strictEqual((busy as InternLifecycleError).error.code, "intern_busy")
    assert.strictEqual((busy as InternLifecycleError).error.metadata?.retryable, true)

    const running = await until(() => client.interns.getIntern({ internId: created.id }), (i) => i.status === "running")
    assert.match(running.hostname ?? "", /^sdk-scout-[0-9a-f]{8}\.interns\.localhost$/)
    assert.strictEqual(running.progress, null)

    const updated = await client.interns.updateIntern({
      internId: created.id,
      updateInternRequest: { name: "sdk-scout-2", description: null, model: "anthropic/claude-3.5-sonnet" }
    })
    assert.strictEqual(updated.name, "sdk-scout-2")
    assert.strictEqual(updated.description, null)
    assert.strictEqual(updated.model, "anthropic/claude-3.5-sonnet")
    assert.strictEqual(updated.instructions, "Be useful.")

    const suspended = await client.interns.suspendIntern({ internId: created.id })
    assert.deepStrictEqual(suspended, { suspended: true })

    const list = await client.interns.listInterns({ limit: 10, status: ["stopped"] })
    assert.isFalse(list.hasMore)
    assert.deepStrictEqual(list.data.map((i) => i.id), [created.id])

    const refused = await failure(client.interns.deleteIntern({ internId: created.id, deleteInternRequest: {} }))
    assert.strictEqual((refused as InternLifecycleError).error.code, "invalid_body")
    const deleting = await client.interns.deleteIntern({
      internId: created.id,
      deleteInternRequest: { acknowledgeWorkspaceLoss: true }
    })
    assert.deepStrictEqual(deleting, { deleting: true })
    const gone = await until(
      () => failure(client.interns.getIntern({ internId: created.id })).catch((e: unknown) => e),
      (e) => e instanceof InternLifecycleError
    )
    assert.strictEqual((gone as InternLifecycleError).statusCode, 404)
    assert.strictEqual((gone as InternLifecycleError).error.code, "not_found")
  })

  it("surfaces invalid_body, name_taken and not_found as the SDK's InternLifecycleError", async () => {
    const intern = await client.interns.createIntern({ createInternRequest: { name: "sdk-rules" } })
    await client.interns.createIntern({ createInternRequest: { name: "sdk-other" } })

    const invalid = await failure(client.interns.updateIntern({ internId: intern.id, updateInternRequest: { name: "No" } }))
    assert.instanceOf(invalid, InternLifecycleError)
    assert.strictEqual((invalid as InternLifecycleError).statusCode, 400)
    assert.strictEqual((invalid as InternLifecycleError).error.code, "invalid_body")

    const clash = await failure(client.interns.updateIntern({ internId: intern.id, updateInternRequest: { name: "sdk-other" } }))
    assert.strictEqual((clash as InternLifecycleError).statusCode, 409)
    assert.strictEqual((clash as InternLifecycleError).error.code, "name_taken")

    const missing = await failure(client.interns.suspendIntern({ internId: "no-such-intern" }))
    assert.strictEqual((missing as InternLifecycleError).statusCode, 404)
    assert.strictEqual((missing as InternLifecycleError).error.code, "not_found")

    const page = await client.interns.listInterns({ limit: 1 })
    assert.isTrue(page.hasMore)
    assert.isString(page.nextCursor)
    const next = await client.interns.listInterns({ limit: 1, startingAfter: page.nextCursor! })
    assert.notStrictEqual(next.data[0]?.id, page.data[0]?.id)
  })
})
