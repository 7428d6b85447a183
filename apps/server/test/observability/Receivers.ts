import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import { endpoint, provider } from "../embeddings/Gateway.ts"
import * as FakeOpenAi from "../fakes/FakeOpenAi.ts"
import { type ServerProcess, startServerProcess } from "../support/ServerProcess.ts"
import { dropDatabase, freshDatabase, storeKind, tempDir } from "../support/TestServer.ts"

export interface Received {
  readonly path: string
  readonly headers: Http.IncomingHttpHeaders
  readonly body: Buffer
}

/**
 * A small HTTP server on 127.0.0.1 that records every request it gets and answers 200 `{}`: an
 * OTLP/HTTP collector for traces, or a broadcast destination.
 */
export const startReceiver = async () => {
  const received: Array<Received> = []
  const server = Http.createServer((req, res) => {
    const parts: Array<Buffer> = []
    req.on("data", (c: Buffer) => parts.push(c))
    req.on("end", () => {
      received.push({ path: req.url ?? "", headers: req.headers, body: Buffer.concat(parts) })
      res.writeHead(200, { "content-type": "application/json" }).end("{}")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

export interface OtlpSpan {
  readonly traceId: string
  readonly spanId: string
  readonly parentSpanId?: string | undefined
  readonly name: string
  readonly kind: number
  readonly attributes: ReadonlyArray<{ readonly key: string; readonly value: Record<string, unknown> }>
  readonly status: { readonly code: number; readonly message?: string }
  readonly links?: ReadonlyArray<{ readonly traceId: string; readonly spanId: string }>
  readonly resource: Record<string, unknown>
}

/** Every span of every OTLP/HTTP JSON export the receiver got, with its resource's attributes. */
export const spansOf = (received: ReadonlyArray<Received>): ReadonlyArray<OtlpSpan> =>
  received.filter((r) => r.path === "/v1/traces").flatMap((r) => {
    const data = JSON.parse(r.body.toString("utf8"))
    return (data.resourceSpans ?? []).flatMap((rs: any) => {
      const resource = Object.fromEntries((rs.resource?.attributes ?? []).map((a: any) => [a.key, Object.values(a.value)[0]]))
      return (rs.scopeSpans ?? []).flatMap((ss: any) => (ss.spans ?? []).map((span: any) => ({ ...span, resource })))
    })
  })

export const attribute = (span: OtlpSpan, key: string): unknown => {
  const found = span.attributes.find((a) => a.key === key)
  return found === undefined ? undefined : Object.values(found.value)[0]
}

export const waitFor = async (condition: () => boolean, timeoutMs = 30_000) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}

/**
 * The gateway as its own process (what operators run) in front of two fake OpenAI-compatible
 * providers of one model, `alpha` (cheaper, tried first) and `beta`, with a broadcast destination.
 */
/** The environment of a gateway exporting its spans to `collector` quickly, without rate limits. */
export const tracingTo = (collector: { readonly origin: string }): Record<string, string> => ({
  SWITCHYARD_RATE_LIMIT: "off",
  OTEL_EXPORTER_OTLP_ENDPOINT: collector.origin,
  OTEL_EXPORTER_OTLP_PROTOCOL: "http/json",
  OTEL_BSP_SCHEDULE_DELAY: "100"
})

export const startObservedGateway = async (options: {
  readonly env?: Record<string, string>
  readonly webhookUrl: string
}) => {
  const alpha = await FakeOpenAi.start({ apiKey: "alpha-upstream-credential-7d1e9c" })
  const beta = await FakeOpenAi.start({ apiKey: "beta-upstream-credential-3b8f2a" })
  const config = {
    providers: [
      provider("alpha", alpha.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.1" } })]),
      provider("beta", beta.url, {}, [endpoint("acme/embed", { upstream_model: "embed", pricing: { prompt: "0.2" } })])
    ],
    broadcast: [{ url: options.webhookUrl, timeout_ms: 5000 }]
  }
  const configPath = NodePath.join(tempDir("config"), "switchyard.json")
  Fs.writeFileSync(configPath, JSON.stringify(config))
  const dataDir = tempDir("observed")
  const databaseUrl = storeKind === "postgres" ? await freshDatabase() : undefined
  const keys = { apiKey: KeySecret.generate(), managementKey: KeySecret.generate() }
  let gateway: ServerProcess
  try {
    gateway = await startServerProcess({
      SWITCHYARD_DATA_DIR: dataDir,
      SWITCHYARD_CONFIG: configPath,
      SWITCHYARD_BOOTSTRAP_API_KEY: keys.apiKey,
      SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: keys.managementKey,
      ALPHA_API_KEY: "alpha-upstream-credential-7d1e9c",
      BETA_API_KEY: "beta-upstream-credential-3b8f2a",
      ...(databaseUrl !== undefined ? { DATABASE_URL: databaseUrl } : {}),
      ...options.env
    })
  } catch (error) {
    await Promise.all([alpha.close(), beta.close()])
    throw error
  }
  const call = async (path: string, body?: unknown, init: { readonly key?: string; readonly headers?: Record<string, string> } = {}) => {
    const response = await fetch(`${gateway.baseUrl}${path}`, {
      method: body === undefined ? "GET" : "POST",
      headers: {
        authorization: `Bearer ${init.key ?? keys.apiKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...init.headers
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    const text = await response.text()
    return { status: response.status, headers: response.headers, json: JSON.parse(text) as any }
  }
  return {
    gateway,
    alpha,
    beta,
    keys,
    call,
    close: async () => {
      await gateway.stop()
      await Promise.all([alpha.close(), beta.close()])
      if (databaseUrl !== undefined) await dropDatabase(databaseUrl)
    }
  }
}

export type ObservedGateway = Awaited<ReturnType<typeof startObservedGateway>>
