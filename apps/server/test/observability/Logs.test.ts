import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { createHash } from "node:crypto"
import * as GatewayLogger from "../../src/observability/GatewayLogger.ts"
import { endpoint, provider, startGateway } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"
import { storeKind } from "../support/TestServer.ts"
import { type ObservedGateway, startObservedGateway, startReceiver, waitFor } from "./Receivers.ts"

const metricsToken = "metrics-token-5c1f0e9a8b7d6c5e"
const webhookToken = "webhook-token-9e8d7c6b5a4f3e2d"

// The first-start announcement of the bootstrap keys is printed as text, not through the log.
const withoutAnnouncement = (text: string) =>
  text.replace(/\nSwitchyard created the workspace[^\n]*\n( {2}[^\n]*\n)*/u, "\n")

const linesOf = (stdout: string) =>
  withoutAnnouncement(stdout).split("\n").filter((line) => line.trim() !== "").map((line) => {
    try {
      return JSON.parse(line) as Record<string, any>
    } catch {
      throw new Error(`not one JSON event per line: ${line}`)
    }
  })

describe(`the log of a gateway process (${storeKind})`, () => {
  let observed: ObservedGateway
  let webhook: Awaited<ReturnType<typeof startReceiver>>

  beforeAll(async () => {
    webhook = await startReceiver()
    observed = await startObservedGateway({
      webhookUrl: `${webhook.origin}/hooks?token=${webhookToken}`,
      env: { SWITCHYARD_RATE_LIMIT: "40/60s", SWITCHYARD_METRICS_TOKEN: metricsToken }
    })
  }, 120_000)
  afterAll(async () => {
    await observed?.close()
    await webhook?.close()
  })

  it("writes one JSON event per line, an access line for every request with the fields an operator needs, and never a secret", async () => {
    const { alpha, beta, call, gateway, keys } = observed
    const topUp = await call("/credits", { amount: 5 }, { key: keys.managementKey })
    assert.strictEqual(topUp.status, 200)

    // A fallback: alpha is tried first and answers 503, beta serves.
    alpha.setBehaviour([{ _tag: "Status", status: 503 }])
    const served = await call("/embeddings", { model: "acme/embed", input: "hello there", provider: { order: ["alpha", "beta"] } })
    assert.strictEqual(served.status, 200, JSON.stringify(served.json))
    assert.strictEqual(served.json.provider, "beta")

    // Every provider fails: a 5xx for the caller.
    alpha.setBehaviour({ _tag: "Status", status: 500 })
    beta.setBehaviour({ _tag: "Status", status: 500 })
    const failed = await call("/embeddings", { model: "acme/embed", input: "hello", provider: { order: ["alpha", "beta"] } })
    assert.strictEqual(failed.status, 502)
    alpha.setBehaviour({ _tag: "Normal" })
    beta.setBehaviour({ _tag: "Normal" })

    const unknown = await call("/no-such-route")
    assert.strictEqual(unknown.status, 404)
    const listed = await call(`/keys?offset=0`, undefined, { key: keys.managementKey })
    assert.strictEqual(listed.status, 200)
    const metrics = await fetch(`${new URL(gateway.baseUrl).origin}/metrics`, { headers: { authorization: `Bearer ${metricsToken}` } })
    assert.strictEqual(metrics.status, 200)

    // The key's own rate limit (40 a minute): the requests above used some of it.
    let refused = 0
    for (let i = 0; i < 200 && refused === 0; i++) {
      const reply = await call("/key")
      if (reply.status === 429) refused += 1
    }
    assert.strictEqual(refused, 1)
    await waitFor(() => webhook.received.length >= 1)

    const keyPrefix = createHash("sha256").update(keys.apiKey).digest("hex").slice(0, 12)
    let lines: ReadonlyArray<Record<string, any>> = []
    await waitFor(() => {
      lines = linesOf(gateway.stdout())
      return lines.some((l) => l.message === "request" && l.status === 429)
    })
    for (const line of lines) {
      assert.isString(line.time)
      assert.include(["debug", "info", "warn", "error"], line.level)
      assert.isString(line.message)
    }
    const access = lines.filter((l) => l.message === "request")
    const servedLine = access.find((l) => l.generation_id === served.json.id)
    assert.isDefined(servedLine)
    assert.deepInclude(servedLine, {
      level: "info",
      method: "POST",
      route: "/api/v1/embeddings",
      path: "/api/v1/embeddings",
      status: 200,
      key: keyPrefix,
      task: "embeddings",
      model: "acme/embed",
      provider: "beta",
      attempts: 2,
      cost: served.json.usage.cost,
      tokens: served.json.usage.total_tokens
    })
    assert.isAbove(servedLine!.duration_ms, 0)

    // The failed attempt and the fallback it caused, with the cause.
    const attemptFailures = lines.filter((l) => l.message === "upstream attempt failed")
    const fallback = attemptFailures.find((l) => l.provider === "alpha" && l.reason === "Unavailable")
    assert.isDefined(fallback, JSON.stringify(attemptFailures))
    assert.strictEqual(fallback!.level, "warn")
    assert.include(fallback!.error, "alpha")

    // The 502: a warning with its cause and both attempts. alpha failed just before, so it is
    // inside its outage window and tried last: the line names it as the last provider tried.
    const failedLine = access.find((l) => l.status === 502)
    assert.isDefined(failedLine)
    assert.deepInclude(failedLine, { level: "warn", model: "acme/embed", provider: "alpha", attempts: 2, key: keyPrefix })
    assert.include(failedLine!.error, "alpha")
    assert.strictEqual(failedLine!.reason, "ServerError")

    assert.deepInclude(access.find((l) => l.status === 404), { route: "unmatched", path: "/api/v1/no-such-route", method: "GET" })
    assert.deepInclude(access.find((l) => l.path === "/api/v1/keys"), { route: "/api/v1/keys", status: 200 })
    assert.deepInclude(access.find((l) => l.path === "/metrics"), { route: "/metrics", status: 200 })
    assert.deepInclude(access.find((l) => l.status === 429), { route: "/api/v1/key", rate_limited: true, key: keyPrefix })

    // Tracing is off (no OTLP endpoint): no trace context leaves the gateway, valid or not.
    for (const request of [...alpha.requests, ...beta.requests]) assert.notProperty(request.headers, "traceparent")
    for (const delivery of webhook.received) assert.notProperty(delivery.headers, "traceparent")

    const secrets = [
      keys.apiKey,
      keys.managementKey,
      "alpha-upstream-credential-7d1e9c",
      "beta-upstream-credential-3b8f2a",
      metricsToken,
      webhookToken
    ]
    const output = withoutAnnouncement(gateway.output())
    for (const secret of secrets) {
      for (let at = 0; at + 16 <= secret.length; at += 4) assert.notInclude(output, secret.slice(at, at + 16))
    }
  })
})

describe("log format and level", () => {
  const capture = async (env: Record<string, string>, program: Effect.Effect<void>) => {
    const { text } = await capturingStdout(() =>
      Effect.runPromise(program.pipe(
        Effect.provide(GatewayLogger.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord(env)))))
      ))
    )
    return text
  }

  const events = Effect.gen(function*() {
    yield* Effect.logDebug("a debug event")
    yield* Effect.logInfo("an info event").pipe(Effect.annotateLogs({ status: 201, route: "/x", big: 12n }))
    yield* Effect.logWarning("a warning")
    yield* Effect.logError("an error", new Error("the cause"))
  })

  it("json: one object per line, annotations as fields; SWITCHYARD_LOG_LEVEL filters", async () => {
    const info = (await capture({ SWITCHYARD_LOG_FORMAT: "json" }, events)).trim().split("\n").map((l) => JSON.parse(l))
    assert.deepStrictEqual(info.map((l) => [l.level, l.message]), [["info", "an info event"], ["warn", "a warning"], ["error", "an error"]])
    assert.deepInclude(info[0], { status: 201, route: "/x", big: "12" })
    const debug = await capture({ SWITCHYARD_LOG_FORMAT: "json", SWITCHYARD_LOG_LEVEL: "debug" }, events)
    assert.strictEqual(debug.trim().split("\n").length, 4)
    const errors = (await capture({ SWITCHYARD_LOG_FORMAT: "json", SWITCHYARD_LOG_LEVEL: "error" }, events)).trim().split("\n")
    assert.strictEqual(errors.length, 1)
    assert.strictEqual(JSON.parse(errors[0]!).level, "error")
  })

  it("pretty is not JSON; a bad value is refused at start", async () => {
    const written: Array<string> = []
    const log = console.log
    console.log = (...args: Array<unknown>) => void written.push(args.map(String).join(" "))
    try {
      await capture({ SWITCHYARD_LOG_FORMAT: "pretty" }, Effect.logInfo("shown pretty"))
    } finally {
      console.log = log
    }
    assert.isTrue(written.some((w) => w.includes("shown pretty")))
    assert.isFalse(written.some((w) => w.trim().startsWith("{")))
    const refused = await Effect.runPromiseExit(Effect.logInfo("x").pipe(
      Effect.provide(GatewayLogger.layer.pipe(Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnvRecord({ SWITCHYARD_LOG_LEVEL: "loud" })))))
    ))
    assert.strictEqual(refused._tag, "Failure")
  })
})

describe(`access lines (${storeKind})`, () => {
  it("say why a 400, 401 or 404 was refused, whether the cache served, and a model call's session and user", async () => {
    const fake = await FakeOpenAi.start({ apiKey: "sk-fake" })
    const gateway = await startGateway({
      config: {
        providers: [
          provider("alpha", fake.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })]),
          { ...provider("jina", fake.url, {}, [{ model: "acme/rerank", upstream_model: "rerank", task: "rerank", pricing: { prompt: "0.01" } }]), adapter: "jina" }
        ],
        workspaces: { default: { cache: true } }
      },
      env: { SWITCHYARD_LOG_FORMAT: "json", SWITCHYARD_LOG_LEVEL: "info" },
      credits: 1
    })
    let captured: Awaited<ReturnType<typeof capturingStdout<Record<string, any>>>>
    try {
      captured = await capturingStdout(async () => {
        const replies = {
          badBody: await gateway.embed({ model: 5, input: "x" }),
          badKey: await gateway.call("/key", undefined, { key: "sk-sy-v1-not-a-real-key-0000000000" }),
          noRoute: await gateway.call("/no-such-route"),
          noModel: await gateway.embed({ model: "acme/nope", input: "x" }),
          miss: await gateway.embed({ model: "acme/embed", input: "cached later", session_id: "s-body", user: "u-embed" }),
          hit: await gateway.embed({ model: "acme/embed", input: "cached later" }, { headers: { "x-session-id": "s-header" } }),
          rerank: await gateway.call("/rerank", { model: "acme/rerank", query: "q", documents: ["a", "b"], session_id: "s-rerank", user: "u-rerank" }),
          rerankHeader: await gateway.call("/rerank", { model: "acme/rerank", query: "q", documents: ["a"] }, { headers: { "x-session-id": "s-rerank-header" } })
        }
        return replies
      })
    } finally {
      await gateway.close()
      await fake.close()
    }
    const { lines, result: replies } = captured
    assert.deepStrictEqual(Object.values(replies).map((r) => r.status), [400, 401, 404, 404, 200, 200, 200, 200])
    const access = lines.filter((l) => l.message === "request")
    const lineOf = (path: string, status: number) => {
      const found = access.filter((l) => l.path === path && l.status === status)
      assert.strictEqual(found.length, 1, `${path} ${status}: ${JSON.stringify(access)}`)
      return found[0]!
    }
    const badBody = lineOf("/api/v1/embeddings", 400)
    assert.match(badBody.error, /^Invalid request body: model: Expected string/u)
    assert.strictEqual(badBody.cache, "off")
    assert.isString(lineOf("/api/v1/key", 401).error)
    assert.strictEqual(lineOf("/api/v1/no-such-route", 404).error, "Not found")
    const noModel = access.find((l) => l.status === 404 && l.path === "/api/v1/embeddings")
    assert.include(noModel?.error, "acme/nope")
    assert.notInclude(JSON.stringify(access), "not-a-real-key")

    const served = access.filter((l) => l.path === "/api/v1/embeddings" && l.status === 200)
    assert.deepStrictEqual(served.map((l) => [l.cache, l.session_id, l.user]), [["miss", "s-body", "u-embed"], ["hit", "s-header", undefined]])
    const reranks = access.filter((l) => l.path === "/api/v1/rerank")
    assert.deepStrictEqual(reranks.map((l) => [l.status, l.cache, l.session_id, l.user]), [
      [200, "off", "s-rerank", "u-rerank"],
      [200, "off", "s-rerank-header", undefined]
    ])
    for (const line of access) assert.include(["hit", "partial", "miss", "bypass", "off"], line.cache)
  })
})

describe(`a store failure (${storeKind})`, () => {
  it("is one error line with its cause; the answer is a 503 that says nothing of it", async () => {
    const fake = await FakeOpenAi.start()
    const gateway = await startGateway({
      config: { providers: [provider("alpha", fake.url, {}, [endpoint("acme/embed", { upstream_model: "embed" })])] },
      env: { SWITCHYARD_LOG_FORMAT: "json" },
      credits: 1
    })
    const rename = (from: string, to: string) =>
      gateway.server.run(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql.unsafe(`ALTER TABLE ${from} RENAME TO ${to}`)
      }))
    let captured: Awaited<ReturnType<typeof capturingStdout<void>>>
    try {
      await rename("holds", "holds_out_of_service")
      captured = await capturingStdout(async () => {
        const reply = await gateway.embed({ model: "acme/embed", input: "x" })
        assert.strictEqual(reply.status, 503)
        assert.notMatch(reply.text, /holds|relation/iu)
      })
    } finally {
      await rename("holds_out_of_service", "holds")
      await gateway.close()
      await fake.close()
    }
    const line = captured.lines.find((l) => l.message === "request" && l.status === 503)
    assert.isDefined(line, captured.text)
    assert.deepInclude(line, { level: "error", route: "/api/v1/embeddings", method: "POST" })
    assert.match(line.cause, /holds/u)
  })
})
