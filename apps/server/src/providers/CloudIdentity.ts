import type { EmbeddingProvider } from "@switchyard/core"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect, Redacted } from "effect"
import * as UpstreamHttp from "./UpstreamHttp.ts"

/** The scope of an Entra ID token for Azure OpenAI (Azure AI services). */
const azureScope = "https://cognitiveservices.azure.com/.default"
/** The scope of a Google token for Vertex AI and the Ranking API. */
const googleScope = "https://www.googleapis.com/auth/cloud-platform"

/** How long before a token's expiry a new one is fetched. */
const refreshBeforeMs = 5 * 60_000

interface Token {
  readonly value: string
  readonly expiresAt: number
}

type Identity = NonNullable<EmbeddingProvider.Connection["identity"]>

/**
 * One identity's token source: the cloud's own library (`@azure/identity`'s
 * DefaultAzureCredential, google-auth-library's Application Default Credentials), asked only when
 * no token is held or the held one is within five minutes of its expiry. Concurrent calls share
 * one fetch.
 */
export class TokenSource {
  private held: Token | undefined
  private fetching: Promise<Token> | undefined
  private readonly fetch: () => Promise<Token>
  constructor(fetch: () => Promise<Token>) {
    this.fetch = fetch
  }

  token(now: number): Promise<string> {
    const held = this.held
    if (held !== undefined && now < held.expiresAt - refreshBeforeMs) return Promise.resolve(held.value)
    this.fetching ??= this.fetch().then(
      (token) => {
        this.held = token
        this.fetching = undefined
        return token
      },
      (error: unknown) => {
        this.fetching = undefined
        throw error
      }
    )
    return this.fetching.then((token) => token.value)
  }
}

const entraSource = () => {
  let credential: import("@azure/identity").TokenCredential | undefined
  return new TokenSource(async () => {
    if (credential === undefined) {
      const { DefaultAzureCredential } = await import("@azure/identity")
      credential = new DefaultAzureCredential()
    }
    const token = await credential.getToken(azureScope)
    if (token === null) throw new Error("DefaultAzureCredential gave no token")
    return { value: token.token, expiresAt: token.refreshAfterTimestamp ?? token.expiresOnTimestamp }
  })
}

// One GoogleAuth per service-account file (or none: Application Default Credentials), shared by
// the token source of the calls and by the Cloud Storage client of Vertex's batch jobs.
const googleAuths = new Map<string, Promise<import("google-auth-library").GoogleAuth>>()

/**
 * The Application Default Credentials (or the service-account file) of a Google identity, as
 * google-auth-library's `GoogleAuth`: the one the calls' tokens come from, for a Google client
 * library to reuse.
 */
export const googleAuth = (credentialsFile: string | undefined): Promise<import("google-auth-library").GoogleAuth> => {
  const key = credentialsFile ?? `metadata:${process.env.GCE_METADATA_HOST ?? ""}`
  let auth = googleAuths.get(key)
  if (auth === undefined) {
    auth = import("google-auth-library").then(({ GoogleAuth }) =>
      new GoogleAuth({ scopes: [googleScope], ...(credentialsFile !== undefined ? { keyFile: credentialsFile } : {}) })
    )
    googleAuths.set(key, auth)
  }
  return auth
}

const googleSource = (credentialsFile: string | undefined) => {
  return new TokenSource(async () => {
    const auth = await googleAuth(credentialsFile)
    const client = await auth.getClient()
    const { token } = await client.getAccessToken()
    if (token === null || token === undefined) throw new Error("Application Default Credentials gave no token")
    // The library's own cache knows the expiry; without one, an hour (Google's tokens' lifetime).
    const expiry = client.credentials.expiry_date
    return { value: token, expiresAt: typeof expiry === "number" ? expiry : Date.now() + 3_600_000 }
  })
}

// One source per identity for the life of the process: a token outlives any one request.
const sources = new Map<string, TokenSource>()

const sourceOf = (identity: Identity): TokenSource => {
  // Without a file, Google's identity is the metadata server's, wherever GCE_METADATA_HOST puts it.
  const key = identity.kind === "entra"
    ? "entra"
    : `google:${identity.credentialsFile ?? `metadata:${process.env.GCE_METADATA_HOST ?? ""}`}`
  let source = sources.get(key)
  if (source === undefined) {
    source = identity.kind === "entra" ? entraSource() : googleSource(identity.credentialsFile)
    sources.set(key, source)
  }
  return source
}

/**
 * The headers that carry a connection's credential: its API key in the wire format's header, or a
 * bearer token of its cloud identity. A token that cannot be had is the provider refusing the
 * gateway's credentials (401 class); the library's message, which can quote a client id or a
 * file's contents, is not passed on.
 */
export const credentialHeaders = (
  connection: EmbeddingProvider.Connection,
  keyHeaders: (apiKey: string) => Readonly<Record<string, string>>
): Effect.Effect<Readonly<Record<string, string>>, UpstreamError.UpstreamError> => {
  const identity = connection.identity
  if (identity === undefined) {
    return Effect.succeed(connection.apiKey === undefined ? {} : keyHeaders(Redacted.value(connection.apiKey)))
  }
  const source = sourceOf(identity)
  return Clock.currentTimeMillis.pipe(
    Effect.flatMap((now) =>
      Effect.tryPromise({
        try: () => source.token(now),
        catch: () => UpstreamError.of(new UpstreamError.AuthFailed({ upstream_status: 401 }))
      })
    ),
    Effect.map(UpstreamHttp.bearer)
  )
}
