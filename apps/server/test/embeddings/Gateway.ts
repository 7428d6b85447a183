import * as Money from "@switchyard/core/catalog/Money"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as KeySecret from "../../src/auth/KeySecret.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { dropDatabase, freshDatabase, type RunningServer, startServer, tempDir } from "../support/TestServer.ts"

export interface Reply {
  readonly status: number
  readonly headers: Headers
  readonly text: string
  readonly json: any
}

export interface CallOptions {
  readonly key?: string
  readonly headers?: Record<string, string>
  readonly method?: string
}

export interface Gateway {
  readonly server: RunningServer
  readonly configPath: string
  readonly call: (path: string, body?: unknown, options?: CallOptions) => Promise<Reply>
  readonly embed: (body: unknown, options?: CallOptions) => Promise<Reply>
  readonly close: () => Promise<void>
}

const model = "acme/embed"

// Three OpenAI-compatible providers of one model that differ in every fact a preference reads.
export const trio = (urls: { readonly alpha: string; readonly beta: string; readonly gamma: string }) => [
  provider("alpha", urls.alpha, { data_collection: "allow", zdr: false }, [
    endpoint(model, {
      pricing: { prompt: "0.1" },
      quantization: "fp32",
      distillable: false,
      supported_parameters: ["dimensions", "encoding_format", "input_type", "user"],
      input_modalities: ["text", "image"]
    })
  ]),
  provider("beta", urls.beta, { data_collection: "deny", zdr: false }, [
    endpoint(model, { pricing: { prompt: "0.02" }, quantization: "fp16", supported_parameters: ["encoding_format"] })
  ]),
  provider("gamma", urls.gamma, { data_collection: "deny", zdr: true }, [
    endpoint(model, { pricing: { prompt: "0.05" }, quantization: "int8", supported_parameters: ["dimensions", "encoding_format"] })
  ])
]

export const provider = (
  slug: string,
  baseUrl: string,
  facts: Record<string, unknown>,
  endpoints: ReadonlyArray<Record<string, unknown>>
) => ({
  slug,
  name: slug,
  adapter: "openai",
  base_url: baseUrl,
  api_key_env: `${slug.toUpperCase()}_API_KEY`,
  data_collection: "deny",
  ...facts,
  endpoints
})

export const endpoint = (modelId: string, facts: Record<string, unknown> = {}) => ({
  model: modelId,
  upstream_model: modelId.split("/")[1],
  pricing: { prompt: "0.01" },
  dimensions: 16,
  max_batch_items: 64,
  distillable: true,
  ...facts
})

/**
 * Starts the gateway with a config file and the fake providers' keys, tops the default workspace
 * up with credits, and returns helpers that speak to it as the bootstrap standard key.
 */
export const startGateway = async (options: {
  readonly config: Record<string, unknown>
  readonly env?: Record<string, string>
  readonly credits?: number
  readonly dataDir?: string
  /** On PostgreSQL, the database to use (and keep at close); by default a fresh one, dropped at close. */
  readonly databaseUrl?: string
  readonly keys?: { readonly apiKey: string; readonly managementKey: string }
}): Promise<Gateway> => {
  const configPath = NodePath.join(tempDir("config"), "switchyard.json")
  Fs.writeFileSync(configPath, JSON.stringify(options.config, null, 2))
  const slugs = ((options.config.providers ?? []) as ReadonlyArray<{ readonly slug: string }>).map((p) => p.slug)
  const server = await startServer({
    ...(options.dataDir !== undefined ? { dataDir: options.dataDir } : {}),
    ...(options.databaseUrl !== undefined ? { databaseUrl: options.databaseUrl } : {}),
    env: {
      SWITCHYARD_CONFIG: configPath,
      SWITCHYARD_RATE_LIMIT: "off",
      ...Object.fromEntries(slugs.map((slug) => [`${slug.toUpperCase()}_API_KEY`, "sk-fake"])),
      ...(options.keys !== undefined
        ? {
          SWITCHYARD_BOOTSTRAP_API_KEY: options.keys.apiKey,
          SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY: options.keys.managementKey
        }
        : {}),
      ...options.env
    }
  })
  const call = (path: string, body?: unknown, callOptions: CallOptions = {}) =>
    request(server, path, body, { key: server.apiKey, ...callOptions })
  if (options.credits !== undefined) {
    const topUp = await call("/credits", { amount: options.credits }, { key: server.managementKey })
    if (topUp.status !== 200) throw new Error(`adding credits failed: ${topUp.text}`)
  }
  return {
    server,
    configPath,
    call,
    embed: (body, callOptions) => call("/embeddings", body, callOptions),
    close: () => server.close()
  }
}

/**
 * Two replicas sharing one fresh PostgreSQL database (so one workspace, topped up with credits by
 * the first) and the bootstrap keys; `close` closes both and drops the database.
 */
export const startReplicas = async (options: { readonly config: Record<string, unknown>; readonly env?: Record<string, string> }) => {
  const databaseUrl = await freshDatabase()
  const keys = { apiKey: KeySecret.generate(), managementKey: KeySecret.generate() }
  const gateways: Array<Gateway> = []
  const close = async () => {
    await Promise.all(gateways.map((g) => g.close()))
    await dropDatabase(databaseUrl)
  }
  try {
    for (const credits of [10, undefined]) {
      gateways.push(await startGateway({ ...options, databaseUrl, keys, ...(credits !== undefined ? { credits } : {}) }))
    }
  } catch (error) {
    await close()
    throw error
  }
  return { gateways: gateways as [Gateway, Gateway], close }
}

export const request = async (
  server: RunningServer,
  path: string,
  body: unknown,
  options: CallOptions = {}
): Promise<Reply> => {
  const response = await fetch(`${server.baseUrl}${path}`, {
    method: options.method ?? (body === undefined ? "GET" : "POST"),
    headers: {
      ...(options.key !== undefined ? { authorization: `Bearer ${options.key}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
      ...options.headers
    },
    ...(body !== undefined ? { body: typeof body === "string" ? body : JSON.stringify(body) } : {})
  })
  const text = await response.text()
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    json = undefined
  }
  return { status: response.status, headers: response.headers, text, json }
}

export const servedBy = (reply: Reply): string | null => reply.headers.get("x-switchyard-provider")

/** The cost in credits of `tokens` prompt tokens at a per-million price, computed exactly. */
export const costOf = (tokens: number, perMillion: string): number =>
  Money.toNumber(Money.toAtto(perMillion) * BigInt(tokens) / 1_000_000n)

export const decodeFloat32 = (base64: string): Array<number> => {
  const bytes = Buffer.from(base64, "base64")
  return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4))
}

/** The JSON body of the last request the fake upstream received. */
export const lastBody = (fake: FakeUpstream.FakeServer): any => fake.requests.at(-1)!.body

export const waitFor = async (condition: () => boolean, timeoutMs = 10_000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error("condition not met in time")
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
