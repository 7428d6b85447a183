import { randomBytes } from "node:crypto"
import * as FakeOpenAiBatch from "./FakeOpenAiBatch.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Azure OpenAI's embeddings API as its REST reference describes it:
 * `POST /openai/deployments/{deployment}/embeddings?api-version=...` with the `api-key` header or
 * an Entra ID bearer token, OpenAI's body and answer, errors as `{ "error": { "code", "message" } }`.
 * It also plays App Service's managed-identity endpoint (`GET /msi/token?api-version=2019-08-01&resource=...`
 * with `X-IDENTITY-HEADER`), which `@azure/identity`'s DefaultAzureCredential asks when
 * `IDENTITY_ENDPOINT` and `IDENTITY_HEADER` are set: the bearer tokens it accepts are the ones it issued.
 * With `batch`, Azure's Files and Batch API too: `/openai/files` and `/openai/batches` (as
 * FakeOpenAiBatch plays OpenAI's), each with the same `api-version` and credential check, whose
 * request lines (`url` `/embeddings`) name a global-batch deployment as their `model`.
 */
export interface Options {
  readonly apiKey?: string
  readonly apiVersion?: string
  /** The deployments and the model each runs. */
  readonly deployments?: Readonly<Record<string, string>>
  /** The `X-IDENTITY-HEADER` value the managed-identity endpoint wants. */
  readonly identityHeader?: string
  /** The lifetime of an issued token, in seconds. */
  readonly tokenLifetimeS?: number
  /** The width of a vector when the request names none. */
  readonly defaultWidth?: number
  /** Serve the Batch API; a batch's requests run through the deployment their `model` names. */
  readonly batch?: Pick<FakeOpenAiBatch.Options, "linesPerPoll" | "failRequest">
}

export interface FakeAzure extends FakeUpstream.FakeServer {
  /** How many tokens the managed-identity endpoint issued. */
  readonly tokensIssued: () => number
  /** The provider batches made (with `batch`). */
  readonly batches: ReadonlyMap<string, FakeOpenAiBatch.FakeBatch>
}

const error = (status: number, code: string, message: string) => ({ status, body: { error: { code, message } } })

export const start = async (options: Options = {}): Promise<FakeAzure> => {
  const issued = new Set<string>()
  const deployments = options.deployments ?? { "embed-small": "text-embedding-3-small" }

  // The resource's check of every data-plane call: a key or an issued token, and the api-version.
  const refuse = (request: FakeUpstream.RecordedRequest) => {
    const url = new URL(request.path, "http://fake")
    const apiKey = request.headers["api-key"]
    const bearer = FakeUpstream.bearer(request)
    if (apiKey === undefined && bearer === undefined) {
      return error(401, "401", "Access denied due to missing subscription key or Entra token.")
    }
    if (apiKey !== undefined ? apiKey !== (options.apiKey ?? "azure-fake-key") : !issued.has(bearer ?? "")) {
      return error(401, "401", "Access denied due to invalid subscription key or wrong API endpoint.")
    }
    if (url.searchParams.get("api-version") !== (options.apiVersion ?? "2024-10-21")) {
      return error(404, "404", "Resource not found")
    }
    return undefined
  }

  const embed = (deployment: string, body: unknown, shape: { readonly width?: number; readonly dropOne?: boolean }) => {
    const model = deployments[deployment]
    if (model === undefined) {
      return error(404, "DeploymentNotFound", "The API deployment for this resource does not exist.")
    }
    if (!FakeUpstream.isRecord(body)) return error(400, "BadRequest", "Request body is not JSON")
    const input = typeof body.input === "string" ? [body.input] : body.input
    if (!Array.isArray(input) || input.length === 0 || !input.every((t) => typeof t === "string")) {
      return error(400, "BadRequest", "'input' must be a string or an array of strings")
    }
    const width = shape.width ?? (typeof body.dimensions === "number" ? body.dimensions : options.defaultWidth ?? 1536)
    const texts = input as ReadonlyArray<string>
    const tokens = texts.reduce((sum, text) => sum + FakeUpstream.wordCount(text), 0)
    return {
      status: 200,
      body: {
        object: "list",
        data: (shape.dropOne ? texts.slice(1) : texts).map((text, index) => ({
          object: "embedding",
          index,
          embedding: body.encoding_format === "base64"
            ? FakeUpstream.float32Base64(FakeUpstream.vectorFor(`${model}|${text}`, width))
            : FakeUpstream.vectorFor(`${model}|${text}`, width)
        })),
        model,
        usage: { prompt_tokens: tokens, total_tokens: tokens }
      }
    }
  }

  // A batch line names its global-batch deployment as its `model`.
  const batches = options.batch === undefined ? undefined : FakeOpenAiBatch.batchRoutes({
    prefix: "/openai",
    endpoint: "/embeddings",
    refuse,
    run: (body) =>
      FakeUpstream.isRecord(body) && typeof body.model === "string"
        ? embed(body.model, body, {})
        : error(400, "BadRequest", "a batch request names its deployment as model"),
    linesPerPoll: options.batch.linesPerPoll,
    failRequest: options.batch.failRequest
  })

  const api: FakeUpstream.FakeApi = {
    basePath: "",
    errorBody: (status, message) => error(status, String(status), message).body,
    handle: (request, shape) => {
      const url = new URL(request.path, "http://fake")
      if (url.pathname === "/msi/token") {
        if (request.headers["x-identity-header"] !== (options.identityHeader ?? "fake-identity-header")) {
          return { status: 401, body: { error: "invalid_request", error_description: "missing or wrong X-IDENTITY-HEADER" } }
        }
        if (url.searchParams.get("resource") !== "https://cognitiveservices.azure.com") {
          return { status: 400, body: { error: "invalid_resource", error_description: "unknown resource" } }
        }
        const token = randomBytes(24).toString("base64url")
        issued.add(token)
        const expiresOn = Math.floor(Date.now() / 1000) + (options.tokenLifetimeS ?? 3600)
        return {
          status: 200,
          body: { access_token: token, expires_on: String(expiresOn), resource: "https://cognitiveservices.azure.com", token_type: "Bearer" }
        }
      }
      if (batches?.owns(url.pathname) === true) return batches.handle(request)
      const match = /^\/openai\/deployments\/([^/]+)\/embeddings$/u.exec(url.pathname)
      if (request.method !== "POST" || match === null) return error(404, "404", "Resource not found")
      return refuse(request) ?? embed(decodeURIComponent(match[1]!), request.body, shape)
    }
  }
  const server = await FakeUpstream.start(api)
  return { ...server, tokensIssued: () => issued.size, batches: batches?.batches ?? new Map() }
}
