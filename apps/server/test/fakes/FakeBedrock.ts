import { Sha256 } from "@aws-crypto/sha256-js"
import { SignatureV4 } from "@smithy/signature-v4"
import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Amazon Bedrock's runtime `InvokeModel` (`POST /model/{modelId}/invoke`) as its API reference
 * describes it, with a container-credentials endpoint beside it (the `AWS_CONTAINER_CREDENTIALS_FULL_URI`
 * route of ECS) that issues the credentials it accepts. Every call's SigV4 signature is
 * recomputed with the secret the fake issued; a wrong one is refused as Bedrock refuses it.
 */
export interface Options {
  readonly region?: string
  /** A long-lived key pair the fake accepts (as from `AWS_ACCESS_KEY_ID`). */
  readonly staticKey?: { readonly accessKeyId: string; readonly secretAccessKey: string }
  /** A Bedrock API key accepted as `Authorization: Bearer`. */
  readonly apiKey?: string
  /** How long issued credentials live, measured from {@link Options.now} (default one hour). */
  readonly credentialLifetimeMs?: number
  /** The fake's idea of now, epoch ms (default the wall clock). */
  readonly now?: () => number
  /** The most tokens (words) one Cohere text may have; absent, no limit. */
  readonly maxTokens?: number
}

interface Refusal {
  readonly status: number
  readonly type: string
  readonly message: string
}

export interface FakeBedrock {
  /** The runtime's base URL, as a provider's `base_url`. */
  readonly url: string
  /** The container-credentials URL, as `AWS_CONTAINER_CREDENTIALS_FULL_URI`. */
  readonly credentialsUrl: string
  /** The token the credentials route requires (`AWS_CONTAINER_AUTHORIZATION_TOKEN`). */
  readonly credentialsToken: string
  readonly invocations: ReadonlyArray<{ readonly path: string; readonly headers: Http.IncomingHttpHeaders; readonly body: unknown }>
  /** Credential fetches, each with the key issued and when it expires. */
  readonly issued: ReadonlyArray<{
    readonly accessKeyId: string
    readonly secretAccessKey: string
    readonly sessionToken: string
    readonly expiration: number
  }>
  /** Requests signed with each issued key, by access key id. */
  readonly usesOf: (accessKeyId: string) => number
  /**
   * Checks every later signature against a secret other than the one issued, as AWS does once a
   * key is rotated: every signed call is refused with `InvalidSignatureException`.
   */
  readonly rotateSecrets: () => void
  /** Refuse the next calls as Bedrock would, one refusal each. */
  readonly refuseNext: (...refusals: ReadonlyArray<Refusal>) => void
  readonly close: () => Promise<void>
}

const cohereEmbedModels = new Set(["cohere.embed-english-v3", "cohere.embed-multilingual-v3", "cohere.embed-v4:0"])

const titanDimensions = new Set([256, 512, 1024])

const validation = (message: string): Refusal => ({ status: 400, type: "ValidationException", message })

const reply = (response: Http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body)
  response.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text), ...headers })
  response.end(text)
}

const refuse = (response: Http.ServerResponse, refusal: Refusal) =>
  reply(response, refusal.status, { message: refusal.message }, {
    "x-amzn-errortype": `${refusal.type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
    "x-amzn-requestid": "00000000-0000-4000-8000-000000000000"
  })

const authPattern = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]{64})$/u

const amzDate = (value: string): Date | undefined => {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/u.exec(value)
  return m === null ? undefined : new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!))
}

export const titan = (model: string, body: Record<string, unknown>) => {
  if (typeof body.inputText !== "string" || body.inputText === "") return validation("Malformed input request: #: required key [inputText] not found")
  const width = body.dimensions ?? 1024
  if (typeof width !== "number" || !titanDimensions.has(width)) return validation("Malformed input request: #/dimensions: 256, 512 or 1024")
  const embedding = FakeUpstream.vectorFor(`${model}|${body.inputText}`, width)
  return { status: 200, body: { embedding, embeddingsByType: { float: embedding }, inputTextTokenCount: FakeUpstream.wordCount(body.inputText) } }
}

const cohereTypes = new Set(["float", "int8", "uint8", "binary", "ubinary"])

export const cohereEmbed = (model: string, body: Record<string, unknown>, maxTokens?: number) => {
  const texts = body.texts
  if (!Array.isArray(texts) || texts.length === 0 || texts.some((t) => typeof t !== "string")) {
    return validation("Malformed input request: #/texts: expected a non-empty array of strings")
  }
  if (texts.length > 96) return validation(`Malformed input request: #/texts: expected maxItems: 96, actual: ${texts.length}`)
  if (typeof body.input_type !== "string") return validation("Malformed input request: #: required key [input_type] not found")
  const truncate = body.truncate ?? "END"
  if (truncate !== "NONE" && truncate !== "START" && truncate !== "END") return validation("Malformed input request: #/truncate: NONE, START or END")
  const long = maxTokens === undefined ? undefined : (texts as Array<string>).find((t) => FakeUpstream.wordCount(t) > maxTokens)
  if (long !== undefined && truncate === "NONE") {
    return validation(`Malformed input request: too many tokens: the text has ${FakeUpstream.wordCount(long)} tokens and the model takes at most ${maxTokens}`)
  }
  const kept = (texts as Array<string>).map((t) => maxTokens === undefined ? t : FakeUpstream.cutWords(t, maxTokens, truncate === "START" ? "start" : "end"))
  const types = body.embedding_types ?? ["float"]
  if (!Array.isArray(types) || !types.every((t) => cohereTypes.has(t))) return validation("Malformed input request: #/embedding_types")
  const width = model === "cohere.embed-v4:0" && typeof body.output_dimension === "number" ? body.output_dimension : model === "cohere.embed-v4:0" ? 1536 : 1024
  const floats = kept.map((t) => FakeUpstream.vectorFor(`${model}|${body.input_type}|${t}`, width))
  const byType = Array.isArray(body.embedding_types)
  return {
    status: 200,
    body: {
      id: `emb-${texts.length}`,
      embeddings: byType ? Object.fromEntries((types as Array<string>).map((t) => [t, floats.map((f) => FakeUpstream.ofType(f, t))])) : floats,
      response_type: byType ? "embeddings_by_type" : "embeddings_floats",
      texts
    },
    headers: { "x-amzn-bedrock-input-token-count": String(kept.reduce((n, t) => n + FakeUpstream.wordCount(t), 0)) }
  }
}

const rerank = (model: string, body: Record<string, unknown>) => {
  if (typeof body.query !== "string") return validation("Malformed input request: #: required key [query] not found")
  const documents = body.documents
  if (!Array.isArray(documents) || documents.length === 0) return validation("Malformed input request: #/documents: expected a non-empty array")
  if (model.startsWith("cohere.") && body.api_version !== 2) return validation("Malformed input request: #/api_version: expected 2")
  const topN = typeof body.top_n === "number" ? body.top_n : documents.length
  const words = new Set(body.query.toLowerCase().split(/\s+/u))
  const results = documents.map((document, index) => {
    const text = String(typeof document === "string" ? document : JSON.stringify(document)).toLowerCase()
    const hits = text.split(/\s+/u).filter((w) => words.has(w)).length
    return { index, relevance_score: hits / (hits + 1) + index / 1e6 }
  }).sort((a, b) => b.relevance_score - a.relevance_score).slice(0, topN)
  return { status: 200, body: { id: "rerank-1", results } }
}

export const start = (options: Options = {}): Promise<FakeBedrock> => {
  const region = options.region ?? "us-east-1"
  const now = options.now ?? Date.now
  const lifetime = options.credentialLifetimeMs ?? 3_600_000
  const credentialsToken = "container-token-fake"
  const secrets = new Map<string, { readonly secret: string; readonly session: string | undefined; readonly expiration: number }>()
  if (options.staticKey !== undefined) {
    secrets.set(options.staticKey.accessKeyId, { secret: options.staticKey.secretAccessKey, session: undefined, expiration: Infinity })
  }
  const invocations: Array<{ path: string; headers: Http.IncomingHttpHeaders; body: unknown }> = []
  const issued: Array<{ accessKeyId: string; secretAccessKey: string; sessionToken: string; expiration: number }> = []
  const uses = new Map<string, number>()
  let refusals: Array<Refusal> = []
  const sockets = new Set<Socket>()

  const issue = (response: Http.ServerResponse) => {
    const n = issued.length + 1
    const accessKeyId = `ASIAFAKE${String(n).padStart(12, "0")}`
    const expiration = now() + lifetime
    const secret = `fake-secret-${n}-${Math.random().toString(36).slice(2)}`
    const session = `fake-session-${n}-${Math.random().toString(36).slice(2)}`
    secrets.set(accessKeyId, { secret, session, expiration })
    issued.push({ accessKeyId, secretAccessKey: secret, sessionToken: session, expiration })
    reply(response, 200, {
      AccessKeyId: accessKeyId,
      SecretAccessKey: secret,
      Token: session,
      Expiration: new Date(expiration).toISOString()
    })
  }

  // The caller's identity: a Bedrock API key, or a SigV4 signature recomputed with the issued secret.
  const authenticate = async (incoming: Http.IncomingMessage, path: string, raw: string): Promise<Refusal | undefined> => {
    const authorization = incoming.headers.authorization ?? ""
    if (authorization.startsWith("Bearer ")) {
      return options.apiKey !== undefined && authorization.slice(7) === options.apiKey
        ? undefined
        : { status: 403, type: "UnrecognizedClientException", message: "Invalid API Key format: Must start with pre-defined prefix" }
    }
    const m = authPattern.exec(authorization)
    if (m === null) return { status: 403, type: "MissingAuthenticationTokenException", message: "Missing Authentication Token" }
    const [, accessKeyId, , signedRegion, service, signedHeaders, signature] = m
    const known = secrets.get(accessKeyId!)
    if (known === undefined || incoming.headers["x-amz-security-token"] !== known.session) {
      return { status: 403, type: "UnrecognizedClientException", message: "The security token included in the request is invalid." }
    }
    if (known.expiration <= now()) {
      return { status: 403, type: "ExpiredTokenException", message: "The security token included in the request is expired" }
    }
    const date = amzDate(String(incoming.headers["x-amz-date"] ?? ""))
    if (signedRegion !== region || service !== "bedrock" || date === undefined) {
      return { status: 403, type: "InvalidSignatureException", message: "Credential should be scoped to a valid region and service." }
    }
    const headers: Record<string, string> = {}
    for (const name of signedHeaders!.split(";")) headers[name] = String(incoming.headers[name] ?? "")
    const host = String(incoming.headers.host ?? "")
    const signer = new SignatureV4({
      service: "bedrock",
      region,
      credentials: { accessKeyId: accessKeyId!, secretAccessKey: known.secret, ...(known.session !== undefined ? { sessionToken: known.session } : {}) },
      sha256: Sha256
    })
    const expected = await signer.sign({
      method: incoming.method ?? "POST",
      protocol: "http:",
      hostname: host.split(":")[0]!,
      path,
      query: {},
      headers,
      body: raw
    }, { signingDate: date, signableHeaders: new Set(signedHeaders!.split(";")) })
    uses.set(accessKeyId!, (uses.get(accessKeyId!) ?? 0) + 1)
    return String(expected.headers.authorization ?? "").endsWith(`Signature=${signature}`)
      ? undefined
      : {
        status: 403,
        type: "InvalidSignatureException",
        message: "The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details."
      }
  }

  const invoke = async (incoming: Http.IncomingMessage, response: Http.ServerResponse, path: string, raw: string) => {
    const refused = await authenticate(incoming, path, raw)
    if (refused !== undefined) return refuse(response, refused)
    const model = decodeURIComponent(/^\/model\/([^/]+)\/invoke$/u.exec(path)![1]!)
    let body: unknown
    try {
      body = JSON.parse(raw)
    } catch {
      return refuse(response, validation("Malformed input request, please reformat your input and try again."))
    }
    invocations.push({ path, headers: incoming.headers, body })
    const next = refusals.shift()
    if (next !== undefined) return refuse(response, next)
    if (!FakeUpstream.isRecord(body)) return refuse(response, validation("Malformed input request: expected a JSON object"))
    const answer = model === "amazon.titan-embed-text-v2:0"
      ? titan(model, body)
      : cohereEmbedModels.has(model)
      ? cohereEmbed(model, body, options.maxTokens)
      : model === "cohere.rerank-v3-5:0" || model === "amazon.rerank-v1:0"
      ? rerank(model, body)
      : validation("The provided model identifier is invalid.")
    return "type" in answer ? refuse(response, answer) : reply(response, answer.status, answer.body, "headers" in answer ? answer.headers : {})
  }

  const server = Http.createServer((incoming, response) => {
    const chunks: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
    incoming.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8")
      const path = incoming.url ?? "/"
      if (incoming.method === "GET" && path === "/container-credentials") {
        if (incoming.headers.authorization !== credentialsToken) return reply(response, 401, { message: "unauthorized" })
        return issue(response)
      }
      if (incoming.method === "POST" && /^\/model\/[^/]+\/invoke$/u.test(path)) {
        return void invoke(incoming, response, path, raw).catch(() => response.socket?.destroy())
      }
      return reply(response, 404, { message: "Not Found" }, { "x-amzn-errortype": "UnknownOperationException" })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      const origin = `http://127.0.0.1:${port}`
      resolve({
        url: origin,
        credentialsUrl: `${origin}/container-credentials`,
        credentialsToken,
        invocations,
        issued,
        usesOf: (accessKeyId) => uses.get(accessKeyId) ?? 0,
        rotateSecrets: () => {
          for (const [id, known] of secrets) secrets.set(id, { ...known, secret: `rotated-${known.secret}` })
        },
        refuseNext: (...next) => {
          refusals = [...next]
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}

/**
 * Leaves the AWS default chain of this test process nothing to find (no keys, profiles, web
 * identity or instance metadata), so only a container route it is pointed at answers.
 */
export const isolateCredentialChain = () => {
  for (const name of ["AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_WEB_IDENTITY_TOKEN_FILE"]) {
    delete process.env[name]
  }
  process.env.AWS_CONFIG_FILE = "/nonexistent/aws-config"
  process.env.AWS_SHARED_CREDENTIALS_FILE = "/nonexistent/aws-credentials"
  process.env.AWS_EC2_METADATA_DISABLED = "true"
}

/** Points the chain's container route at the fake's credentials endpoint. */
export const pointCredentialChainAt = (fake: FakeBedrock) => {
  process.env.AWS_CONTAINER_CREDENTIALS_FULL_URI = fake.credentialsUrl
  process.env.AWS_CONTAINER_AUTHORIZATION_TOKEN = fake.credentialsToken
}
