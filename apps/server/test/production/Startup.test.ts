import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as NodePath from "node:path"
import { shownUrl } from "../../src/StartupReport.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import { dataDirWithStore } from "../reliability/GatewayProcess.ts"
import { healthy, launch } from "../support/BundleProcess.ts"
import { freePort } from "../support/ServerProcess.ts"
import { tempDir } from "../support/TestServer.ts"

type Outcome = "answered" | "refused" | "hung" | "other"

/** One request; "hung" when no answer (and no refusal) came within `limitMs`. */
const probe = (url: string, limitMs: number): Promise<{ readonly outcome: Outcome; readonly status?: number; readonly detail?: string }> =>
  fetch(url, { signal: AbortSignal.timeout(limitMs) }).then(
    async (response) => {
      await response.arrayBuffer()
      return { outcome: "answered" as const, status: response.status }
    },
    (error: Error & { cause?: { code?: string } }) => {
      if (error.name === "TimeoutError") return { outcome: "hung" as const }
      if (error.cause?.code === "ECONNREFUSED") return { outcome: "refused" as const }
      return { outcome: "other" as const, detail: `${error.message} ${error.cause?.code ?? ""}` }
    }
  )

describe("start-up (the production bundle)", () => {
  it("requests fired from before the start until well after it each get an answer: refused before the port opens, served after", async () => {
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const gateway = launch({ SWITCHYARD_PORT: String(port), SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_DATA_DIR: dataDirWithStore(), DATABASE_URL: "" })
    const results: Array<Awaited<ReturnType<typeof probe>> & { readonly path: string }> = []
    const paths = ["/api/v1/health", "/api/v1/models", "/api/v1/embeddings/models", "/api/v1/keys", "/api/v1/openapi.json"]
    try {
      let servedSince: number | undefined
      let round = 0
      const deadline = Date.now() + 240_000
      // Fires until 40 rounds after the first 200: through the whole start and well after it.
      while (Date.now() < deadline && (servedSince === undefined || round - servedSince < 40)) {
        const batch = await Promise.all(paths.map(async (path) => ({ path, ...(await probe(`${origin}${path}`, 10_000)) })))
        results.push(...batch)
        if (servedSince === undefined && batch.some((r) => r.path === "/api/v1/health" && r.status === 200)) servedSince = round
        round++
        if (!gateway.isRunning()) break
      }
      assert.isDefined(servedSince, `never served:\n${gateway.stdout()}\n${gateway.stderr()}`)
      const unanswered = results.filter((r) => r.outcome === "hung" || r.outcome === "other")
      assert.deepStrictEqual(unanswered, [], "every request is refused (port closed) or answered")
      assert.isAbove(results.filter((r) => r.outcome === "refused").length, 0, "some requests came before the port opened")
      // Once the port is open every route answers as it will for good: no 5xx while starting.
      const answered = results.filter((r) => r.outcome === "answered")
      assert.deepStrictEqual(answered.filter((r) => (r.status ?? 0) >= 500), [])
      assert.deepStrictEqual([...new Set(answered.filter((r) => r.path === "/api/v1/health").map((r) => r.status))], [200])
      assert.deepStrictEqual([...new Set(answered.filter((r) => r.path === "/api/v1/keys").map((r) => r.status))], [401])
    } finally {
      await gateway.stop()
    }
    const exit = await gateway.exited
    assert.strictEqual(exit.code, 0)
  }, 360_000)
})

/** Runs the bundle to its exit and returns its exit code and output. */
const failedStart = async (env: Record<string, string>) => {
  const gateway = launch({ SWITCHYARD_HOST: "127.0.0.1", SWITCHYARD_DATA_DIR: dataDirWithStore(), DATABASE_URL: "", ...env })
  const timer = setTimeout(() => gateway.child.kill("SIGKILL"), 120_000)
  const exit = await gateway.exited
  clearTimeout(timer)
  return { code: exit.code, stdout: gateway.stdout(), stderr: gateway.stderr() }
}

const oneLine = (stderr: string) => {
  const lines = stderr.split("\n").filter((line) => line.trim() !== "")
  assert.strictEqual(lines.length, 1, stderr)
  assert.match(lines[0]!, /^switchyard: cannot start: /u)
  return lines[0]!
}

describe("start-up failures are one line on standard error and a non-zero exit", () => {
  it("a busy port names the address; no first-start keys are made or printed", async () => {
    const blocker = Net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const port = (blocker.address() as Net.AddressInfo).port
    try {
      const result = await failedStart({ SWITCHYARD_PORT: String(port) })
      assert.strictEqual(result.code, 1)
      assert.include(oneLine(result.stderr), `cannot listen on 127.0.0.1:${port}: the address is already in use`)
      assert.notInclude(result.stdout, "sk-sy-v1-")
    } finally {
      await new Promise((resolve) => blocker.close(resolve))
    }
  }, 150_000)

  it("a bad setting names the variable and the rule", async () => {
    const port = await failedStart({ SWITCHYARD_PORT: "eighty" })
    assert.strictEqual(port.code, 1)
    assert.include(oneLine(port.stderr), "SWITCHYARD_PORT")
    const rate = await failedStart({ SWITCHYARD_PORT: String(await freePort()), SWITCHYARD_RATE_LIMIT: "lots" })
    assert.strictEqual(rate.code, 1)
    assert.include(oneLine(rate.stderr), "SWITCHYARD_RATE_LIMIT")
  }, 150_000)

  it("an unreachable database names DATABASE_URL and the reason, never the password", async () => {
    const closed = await freePort()
    const result = await failedStart({
      SWITCHYARD_PORT: String(await freePort()),
      DATABASE_URL: `postgres://switchyard:hunter2-password@127.0.0.1:${closed}/switchyard`,
      SWITCHYARD_SECRET_KEY: "b".repeat(64)
    })
    assert.strictEqual(result.code, 1)
    const line = oneLine(result.stderr)
    assert.include(line, "DATABASE_URL")
    assert.include(line, "ECONNREFUSED")
    assert.notInclude(result.stderr + result.stdout, "hunter2")
  }, 150_000)

  it("the stack trace follows only at SWITCHYARD_LOG_LEVEL=debug", async () => {
    const quiet = await failedStart({ SWITCHYARD_PORT: "eighty" })
    assert.notMatch(quiet.stderr, /\n\s+at /u)
    const debug = await failedStart({ SWITCHYARD_PORT: "eighty", SWITCHYARD_LOG_LEVEL: "debug" })
    assert.strictEqual(debug.code, 1)
    assert.match(debug.stderr, /^switchyard: cannot start: /u)
    assert.match(debug.stderr, /\n\s+at /u)
  }, 150_000)
})

/** The shape of a start-up report's line: a subject and a colon, or an indented provider. */
const reportLine = /^(store|config|providers|console|tracing|cache|rate limit|memory): |^ {2}[a-z0-9-]+: /u

/** The messages of the JSON log lines the gateway wrote to standard output. */
const logMessages = (stdout: string): Array<{ readonly level: string; readonly message: string }> =>
  stdout.split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))

describe("what the production bundle says at start and stop", () => {
  it("the start-up log names the store, the config file, the providers and endpoints, the console, tracing, the cache and the rate limit; SIGINT writes a line when the shutdown begins and one when it ends, and exits 0", async () => {
    const port = await freePort()
    const origin = `http://127.0.0.1:${port}`
    const dataDir = dataDirWithStore()
    const configPath = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(configPath, JSON.stringify({
      providers: [provider("alpha", "http://127.0.0.1:9/v1", {}, [
        endpoint("acme/embed", { upstream_model: "embed" }),
        endpoint("acme/embed-large", { upstream_model: "embed-large" })
      ])]
    }))
    const notBuilt = tempDir("console")
    const gateway = launch({
      SWITCHYARD_PORT: String(port),
      SWITCHYARD_HOST: "127.0.0.1",
      SWITCHYARD_DATA_DIR: dataDir,
      DATABASE_URL: "",
      SWITCHYARD_CONFIG: configPath,
      ALPHA_API_KEY: "sk-alpha-secret-value",
      SWITCHYARD_CONSOLE_DIR: notBuilt,
      SWITCHYARD_RATE_LIMIT: "120/1m",
      SWITCHYARD_CACHE_TTL_SECONDS: "3600",
      SWITCHYARD_CACHE_MEMORY_ENTRIES: "0",
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:otlp-password@127.0.0.1:9/otlp/v1/traces?token=otlp-token",
      OTEL_BSP_SCHEDULE_DELAY: "600000",
      SWITCHYARD_LOG_FORMAT: "json"
    })
    try {
      await healthy(gateway, origin)
      const messages = logMessages(gateway.stdout()).map((line) => line.message)
      const at = messages.indexOf(`Switchyard listening on ${origin}/api/v1`)
      assert.isAtLeast(at, 0, gateway.stdout())
      // The report's own lines, in order: a line of another fiber (a probe's warning on a slow
      // machine) may still be written between two of them.
      const report = messages.slice(at + 1).filter((message) => reportLine.test(message)).slice(0, 10)
      assert.lengthOf(report, 10, messages.join("\n"))
      assert.match(report[9]!, /^memory: (no cgroup limit|cgroup limit \d+ MiB), request bytes in flight at most \d+ MiB, 25% of it per workspace while others need it$/u, messages.join("\n"))
      assert.match(report[2]!, /^providers: 2 active providers with 4 endpoints; \d+ more providers become active once their key is set \(OPENAI_API_KEY, /u)
      assert.deepStrictEqual(report, [
        `store: SQLite (embedded) in ${NodePath.join(dataDir, "switchyard.db")} (SWITCHYARD_DATA_DIR)`,
        `config: ${configPath} (SWITCHYARD_CONFIG), merged over the built-in catalog`,
        report[2]!,
        "  local: switchyard/local-embed (embeddings), switchyard/local-rerank (rerank)",
        "  alpha: acme/embed (embeddings), acme/embed-large (embeddings)",
        `console: off, not built in ${notBuilt} (\`npx -y pnpm@10 build\` builds it; SWITCHYARD_CONSOLE_DIR names another place)`,
        "tracing: on, OTLP to http://collector:***@127.0.0.1:9/otlp/v1/traces as service switchyard",
        "cache: in the store, entries live 1 hour, at most 100,000 entries, none also in memory (on for a workspace with `cache: true`)",
        "rate limit: 120 requests per 1m per key, in this process",
        report[9]!
      ])
      assert.notInclude(gateway.stdout(), "otlp-password")
      assert.notInclude(gateway.stdout(), "otlp-token")
      assert.notInclude(gateway.stdout(), "sk-alpha-secret-value")
    } finally {
      gateway.child.kill("SIGINT")
    }
    const exit = await gateway.exited
    assert.deepStrictEqual(exit, { code: 0, signal: null }, gateway.stderr())
    const lines = logMessages(gateway.stdout())
    const stopping = lines.findIndex((line) => line.message.startsWith("Switchyard is shutting down"))
    assert.strictEqual(lines[stopping]?.message, "Switchyard is shutting down (SIGINT): 0 requests in flight, which may finish; new connections are refused and kept-alive ones close after their answer")
    assert.match(lines.at(-1)!.message, /^Switchyard stopped: shutdown took \d+\.\d s$/u)
    assert.strictEqual(gateway.stderr(), "")
  }, 360_000)
})

describe("URLs in the start-up log", () => {
  it("keep the scheme, user, host, port and path; never the password or the query", () => {
    assert.strictEqual(
      shownUrl("postgres://switchyard:hunter2@db.internal:5432/switchyard?sslmode=require&password=x"),
      "postgres://switchyard:***@db.internal:5432/switchyard"
    )
    assert.strictEqual(shownUrl("redis://:secret@cache:6379"), "redis://cache:6379")
    assert.strictEqual(shownUrl("redis://cache:6379/0"), "redis://cache:6379/0")
    assert.strictEqual(shownUrl("not a url"), "(not a valid URL)")
  })
})
