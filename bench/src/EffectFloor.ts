/**
 * The stack's own floor: the least an Effect 4 gateway does for one embeddings request, so that
 * every CPU figure of Switchyard has a floor of its own stack in the same run. HttpServer and
 * HttpRouter over node:http, HttpClient over undici, a bearer check against one key, the body read
 * as JSON and decoded with a Schema, the request forwarded with the upstream's model name, the
 * answer's usage read, its cost worked out in nano-dollars, a ledger record kept in memory, and
 * the upstream's answer returned with the cost in its usage.
 *
 * No routing, no store, no access log, no metrics: what Switchyard does beyond this is its own cost.
 */
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Exit, Layer, Schema, Scope } from "effect"
import { HttpClient, HttpClientRequest, HttpRouter, HttpServer, HttpServerRequest, HttpServerResponse } from "effect/http"
import * as Http from "node:http"

export interface EffectFloorOptions {
  readonly upstreamPort: number
  readonly upstreamApiKey: string
  /** The bearer token the floor accepts. */
  readonly apiKey: string
  /** Gateway model name → upstream model name. */
  readonly models: Readonly<Record<string, string>>
  /** USD per million prompt tokens, as a decimal string. */
  readonly promptPrice: string
  readonly port?: number
}

const EmbeddingsRequest = Schema.Struct({
  model: Schema.String,
  input: Schema.Union([Schema.String, Schema.Array(Schema.String)]),
  encoding_format: Schema.optional(Schema.Literals(["float", "base64"])),
  dimensions: Schema.optional(Schema.Number)
})
const decodeRequest = Schema.decodeUnknownEffect(EmbeddingsRequest)

const UpstreamUsage = Schema.Struct({
  usage: Schema.Struct({ prompt_tokens: Schema.Number, total_tokens: Schema.Number })
})
const decodeUsage = Schema.decodeUnknownEffect(UpstreamUsage)

/** Nano-dollars per token for a price in USD per million tokens: 1 USD/M = 1,000 nano-dollars per token. */
const nanosPerToken = (usdPerMillion: string): bigint => {
  const [whole = "0", fraction = ""] = usdPerMillion.split(".")
  const scaled = BigInt(whole) * 1000n + BigInt((fraction + "000").slice(0, 3))
  return scaled
}

const error = (status: number, message: string) =>
  HttpServerResponse.jsonUnsafe({ error: { code: status, message } }, { status })

const layer = (options: EffectFloorOptions) => {
  const perToken = nanosPerToken(options.promptPrice)
  const ledger: Array<{ readonly model: string; readonly tokens: number; readonly costNanos: bigint }> = []
  const upstreamUrl = `http://127.0.0.1:${options.upstreamPort}/v1/embeddings`
  const expected = `Bearer ${options.apiKey}`

  const embeddings = Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    if (request.headers["authorization"] !== expected) return error(401, "missing or invalid API key")
    const json = yield* request.json
    const body = yield* decodeRequest(json)
    const upstreamModel = options.models[body.model]
    if (upstreamModel === undefined) return error(404, `no endpoint serves ${body.model}`)
    const client = yield* HttpClient.HttpClient
    const answer = yield* client.execute(
      HttpClientRequest.post(upstreamUrl).pipe(
        HttpClientRequest.bearerToken(options.upstreamApiKey),
        HttpClientRequest.bodyJsonUnsafe({ ...body, model: upstreamModel })
      )
    )
    const upstream = (yield* answer.json) as Record<string, unknown>
    if (answer.status !== 200) return error(502, `upstream answered ${answer.status}`)
    const { usage } = yield* decodeUsage(upstream)
    const costNanos = perToken * BigInt(usage.prompt_tokens)
    ledger.push({ model: body.model, tokens: usage.prompt_tokens, costNanos })
    if (ledger.length > 10_000) ledger.splice(0, ledger.length - 1_000)
    return HttpServerResponse.jsonUnsafe({
      ...upstream,
      model: body.model,
      usage: { ...usage, cost: Number(costNanos) / 1e9 }
    })
  }).pipe(
    Effect.catchTag("SchemaError", (e) => Effect.succeed(error(400, e.message))),
    Effect.catch(() => Effect.succeed(error(502, "upstream unreachable")))
  )

  const routes = HttpRouter.add("POST", "/api/v1/embeddings", embeddings)
  return HttpRouter.serve(routes, { disableLogger: true }).pipe(
    Layer.provide(Layer.effect(HttpClient.HttpClient, NodeHttpClient.makeUndici).pipe(Layer.provide(NodeHttpClient.layerDispatcher))),
    Layer.provideMerge(NodeHttpServer.layer(Http.createServer, { port: options.port ?? 0, host: "127.0.0.1" }))
  )
}

/** Starts the floor in this process and returns its port once it listens. */
export const start = (options: EffectFloorOptions): Promise<{ readonly port: number; readonly close: () => Promise<void> }> =>
  new Promise((resolve, reject) => {
    const program = Effect.gen(function*() {
      const server = yield* HttpServer.HttpServer
      const address = server.address
      if (address._tag === "UnixPathAddress") return yield* Effect.die("the floor listens on TCP")
      return address.port
    })
    const scope = Effect.runSync(Scope.make())
    Effect.runPromise(
      Layer.buildWithScope(layer(options), scope).pipe(Effect.flatMap((context) => Effect.provide(program, context)))
    ).then(
      (port) => resolve({ port, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }),
      reject
    )
  })
