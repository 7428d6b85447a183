/**
 * Where the client sends requests and with which key: from options, else from the environment
 * (`SWITCHYARD_BASE_URL`, `SWITCHYARD_API_KEY`), else the local default.
 *
 * @since 0.1.0
 */
import { Config, Data, Duration, Effect, Option, Redacted } from "effect"
import * as RetryPolicy from "./RetryPolicy.ts"

/**
 * What a caller may set; everything is optional.
 *
 * @since 0.1.0
 */
export interface ClientOptions {
  /**
   * The gateway's base URL, `http://127.0.0.1:8080/api/v1` by default. The server's origin
   * (`http://127.0.0.1:8080`) works too: a trailing `/api/v1` is optional.
   */
  readonly baseUrl?: string | URL | undefined
  /** The bearer key. Without one, only `health` succeeds. */
  readonly apiKey?: string | Redacted.Redacted<string> | undefined
  /** Bounds of the retry loop (merged over {@link RetryPolicy.defaults}); `false` turns retries off. */
  readonly retry?: Partial<RetryPolicy.RetryPolicy> | false | undefined
  /** The time limit of one attempt, 120 seconds by default. */
  readonly timeout?: Duration.Input | undefined
  /** Headers sent with every request (the web console sends its session's `x-csrf-token`). */
  readonly headers?: Readonly<Record<string, string>> | undefined
}

/**
 * The options after defaults and the environment are applied.
 *
 * @since 0.1.0
 */
export interface ResolvedOptions {
  /** The base URL as given, without a trailing slash (`http://host:8080/api/v1`). */
  readonly baseUrl: string
  /** What the contract's paths (which start with `/api/v1`) are appended to. */
  readonly root: string
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly retry: RetryPolicy.RetryPolicy
  readonly timeout: Duration.Duration
  readonly headers: Readonly<Record<string, string>>
}

/**
 * The base URL used when neither the options nor the environment set one.
 *
 * @since 0.1.0
 */
export const defaultBaseUrl = "http://127.0.0.1:8080/api/v1"

/**
 * The path prefix every path of the contract starts with.
 *
 * @since 0.1.0
 */
const apiPrefix = "/api/v1"

/**
 * The options cannot be used: the base URL is not an absolute `http(s)` URL.
 *
 * @since 0.1.0
 */
export class InvalidClientOptions extends Data.TaggedError("InvalidClientOptions")<{
  readonly message: string
}> {}

const nonEmpty = (name: string) =>
  Config.String(name).pipe(
    Config.option,
    Config.map(Option.filter((value) => value.trim().length > 0))
  )

/**
 * Splits a base URL into the URL the user knows and the root the contract's paths are appended
 * to.
 *
 * @since 0.1.0
 */
export const parseBaseUrl = (input: string | URL): Effect.Effect<
  { readonly baseUrl: string; readonly root: string },
  InvalidClientOptions
> => {
  const text = input.toString().trim()
  if (!URL.canParse(text)) {
    return Effect.fail(new InvalidClientOptions({ message: `The base URL ${JSON.stringify(text)} is not a URL` }))
  }
  const url = new URL(text)
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Effect.fail(
      new InvalidClientOptions({ message: `The base URL ${JSON.stringify(text)} must start with http:// or https://` })
    )
  }
  if (url.search !== "" || url.hash !== "") {
    return Effect.fail(
      new InvalidClientOptions({ message: `The base URL ${JSON.stringify(text)} must not carry a query or a fragment` })
    )
  }
  const path = url.pathname.replace(/\/+$/u, "")
  const rootPath = path.endsWith(apiPrefix) ? path.slice(0, -apiPrefix.length) : path
  return Effect.succeed({
    baseUrl: `${url.origin}${rootPath}${apiPrefix}`,
    root: `${url.origin}${rootPath}`
  })
}

/**
 * Applies the environment and the defaults to `options`.
 *
 * **Details**
 *
 * An option wins over its variable; an empty variable counts as unset. The variables are read
 * through `Config`, so a `ConfigProvider` can stand in for the process environment.
 *
 * @since 0.1.0
 */
export const resolve = Effect.fnUntraced(function*(options: ClientOptions = {}) {
  const envBaseUrl = yield* nonEmpty("SWITCHYARD_BASE_URL").pipe(Effect.orElseSucceed(() => Option.none<string>()))
  const envApiKey = yield* nonEmpty("SWITCHYARD_API_KEY").pipe(Effect.orElseSucceed(() => Option.none<string>()))
  const { baseUrl, root } = yield* parseBaseUrl(options.baseUrl ?? Option.getOrElse(envBaseUrl, () => defaultBaseUrl))
  const apiKey = options.apiKey === undefined
    ? Option.map(envApiKey, (key) => Redacted.make(key.trim()))
    : Option.some(Redacted.isRedacted(options.apiKey) ? options.apiKey : Redacted.make(options.apiKey))
  const retry = options.retry === false
    ? { ...RetryPolicy.defaults, retries: 0 }
    : { ...RetryPolicy.defaults, ...options.retry }
  return {
    baseUrl,
    root,
    apiKey,
    retry,
    timeout: Duration.fromInputUnsafe(options.timeout ?? "120 seconds"),
    headers: options.headers ?? {}
  } satisfies ResolvedOptions
})
