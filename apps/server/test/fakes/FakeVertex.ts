import { randomBytes } from "node:crypto"
import { taskTypes } from "./FakeGemini.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Vertex AI's text embeddings (`POST /v1/projects/{p}/locations/{l}/publishers/google/models/{m}:predict`)
 * and Google's Ranking API (`POST /v1/projects/{p}/locations/global/rankingConfigs/default_ranking_config:rank`)
 * as their REST references describe them, errors as `{ "error": { "code", "message", "status" } }`.
 * It also plays the GCE/GKE metadata server (`GET /computeMetadata/v1/instance` and
 * `.../service-accounts/default/token`, both wanting `Metadata-Flavor: Google`), which
 * google-auth-library asks when `GCE_METADATA_HOST` names it: the bearer tokens it accepts are
 * the ones it issued.
 */
export interface Options {
  readonly project?: string
  readonly tokenLifetimeS?: number
  /** The width of a vector when the request names none. */
  readonly defaultWidth?: number
  /** The most tokens (words) one instance may have; absent, no limit. */
  readonly maxTokens?: number
}

export interface FakeVertex extends FakeUpstream.FakeServer {
  /** `host:port`, for `GCE_METADATA_HOST`. */
  readonly host: string
  readonly tokensIssued: () => number
  /** The tokens issued so far (to check that none leaks). */
  readonly tokens: () => ReadonlyArray<string>
  /** Stops accepting every token issued so far, as a revoked service account's. */
  readonly revokeTokens: () => void
}

const statuses: Record<number, string> = { 400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND" }

const error = (status: number, message: string) => ({
  status,
  body: { error: { code: status, message, status: statuses[status] ?? "UNAVAILABLE" } }
})

export const start = async (options: Options = {}): Promise<FakeVertex> => {
  const issued = new Set<string>()
  const all: Array<string> = []
  const project = options.project ?? "fake-project"
  const metadata = (request: FakeUpstream.RecordedRequest, path: string) => {
    if (request.headers["metadata-flavor"] !== "Google") return { status: 403, body: "Missing Metadata-Flavor:Google header." }
    const headers = { "metadata-flavor": "Google" }
    if (path === "/computeMetadata/v1/instance" || path === "/computeMetadata/v1/instance/") {
      return { status: 200, body: {}, headers, text: "attributes/\nid\nservice-accounts/\n" }
    }
    if (path === "/computeMetadata/v1/instance/service-accounts/default/token") {
      const token = `ya29.${randomBytes(24).toString("base64url")}`
      issued.add(token)
      all.push(token)
      return { status: 200, headers, body: { access_token: token, expires_in: options.tokenLifetimeS ?? 3599, token_type: "Bearer" } }
    }
    return { status: 404, body: "Not Found", headers }
  }
  const api: FakeUpstream.FakeApi = {
    basePath: "",
    errorBody: (status, message) => error(status, message).body,
    handle: (request, shape) => {
      const url = new URL(request.path, "http://fake")
      if (url.pathname.startsWith("/computeMetadata/")) return metadata(request, url.pathname)
      if (request.method !== "POST") return error(404, "Not Found")
      if (!issued.has(FakeUpstream.bearer(request) ?? "")) {
        return error(401, "Request had invalid authentication credentials. Expected OAuth 2 access token.")
      }
      const predict = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/google\/models\/([^/:]+):predict$/u.exec(url.pathname)
      const rank = /^\/v1\/projects\/([^/]+)\/locations\/global\/rankingConfigs\/default_ranking_config:rank$/u.exec(url.pathname)
      const found = predict ?? rank
      if (found === null) return error(404, "Not Found")
      if (found[1] !== project) return error(403, `Permission denied on resource project ${found[1]}.`)
      const body = request.body
      if (!FakeUpstream.isRecord(body)) return error(400, "Invalid JSON payload received.")
      if (rank !== null) {
        if (typeof body.model !== "string" || !body.model.startsWith("semantic-ranker-")) return error(400, "Unsupported model.")
        if (typeof body.query !== "string" || !Array.isArray(body.records) || body.records.length === 0) {
          return error(400, "query and records are required.")
        }
        const records = body.records as ReadonlyArray<Record<string, unknown>>
        if (!records.every((r) => typeof r.id === "string" && typeof r.content === "string")) {
          return error(400, "Each record needs an id and content.")
        }
        const scored = records.map((r) => ({
          id: r.id as string,
          score: Number(FakeUpstream.vectorFor(`${body.query}|${r.content}`, 1)[0]!.toFixed(4)) / 2 + 0.5
        }))
        scored.sort((a, b) => b.score - a.score)
        return { status: 200, body: { records: shape.dropOne ? scored.slice(1) : scored } }
      }
      const model = predict![3]!
      if (!Array.isArray(body.instances) || body.instances.length === 0) return error(400, "instances must be a non-empty list.")
      const parameters = FakeUpstream.isRecord(body.parameters) ? body.parameters : {}
      const instances = body.instances as ReadonlyArray<Record<string, unknown>>
      for (const instance of instances) {
        if (typeof instance.content !== "string") return error(400, "Each instance needs content.")
        if (instance.task_type !== undefined && !taskTypes.has(instance.task_type as string)) {
          return error(400, `Unsupported task_type: ${String(instance.task_type)}`)
        }
      }
      // `autoTruncate` (default true) cuts an instance's end at the model's limit; false refuses it.
      const max = options.maxTokens
      if (max !== undefined) {
        const long = instances.find((i) => FakeUpstream.wordCount(i.content as string) > max)
        if (long !== undefined && parameters.autoTruncate === false) {
          return error(400, `Unable to submit request because the input token count is ${FakeUpstream.wordCount(long.content as string)} but the model supports up to ${max}. Reduce the input token count and try again. You can also use the auto-truncate parameter.`)
        }
      }
      const content = (instance: Record<string, unknown>) => max === undefined ? instance.content as string : FakeUpstream.cutWords(instance.content as string, max, "end")
      const width = shape.width ?? (typeof parameters.outputDimensionality === "number" ? parameters.outputDimensionality : options.defaultWidth ?? 768)
      return {
        status: 200,
        body: {
          predictions: (shape.dropOne ? instances.slice(1) : instances).map((instance) => ({
            embeddings: {
              values: FakeUpstream.vectorFor(`${model}|${String(instance.task_type ?? "")}|${content(instance)}`, width),
              statistics: { token_count: FakeUpstream.wordCount(content(instance)), truncated: content(instance) !== instance.content }
            }
          })),
          metadata: { billableCharacterCount: instances.reduce((sum, i) => sum + (i.content as string).length, 0) }
        }
      }
    }
  }
  const server = await FakeUpstream.start(api)
  return {
    ...server,
    host: server.url.replace(/^http:\/\//u, ""),
    tokensIssued: () => all.length,
    tokens: () => all,
    revokeTokens: () => issued.clear()
  }
}
