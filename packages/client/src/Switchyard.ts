/**
 * The Switchyard client for code that uses promises: the same operations as
 * {@link GatewayClient}, each returning a `Promise`.
 *
 * **When to use**
 *
 * Outside Effect:
 *
 * ```ts
 * import { Switchyard } from "@switchyard/client/Switchyard"
 *
 * const switchyard = new Switchyard({ apiKey: process.env.MANAGEMENT_KEY })
 * const { data } = await switchyard.keys.list({ query: {} })
 * await switchyard.close()
 * ```
 *
 * **Details**
 *
 * The groups and methods are read from the core contract when the object is built, so they
 * always match the server's operations. A call resolves with the decoded success value and
 * rejects with the same typed error the Effect client fails with: check `error._tag`
 * (`"Forbidden"`, `"InternNotFound"`...), or `instanceof` the error classes of
 * `@switchyard/core`. Retries follow {@link RetryPolicy}.
 *
 * **Gotchas**
 *
 * The constructor validates the base URL and throws `InvalidClientOptions` for a bad one. Call
 * `close()` (or use `await using`) when done, so idle connections do not keep the process alive.
 *
 * @since 0.1.0
 */
import { Api } from "@switchyard/core/api/Api"
import { Effect, ManagedRuntime } from "effect"
import type { HttpApi, HttpApiClient, HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { HttpApi as HttpApiRuntime } from "effect/http-api"
import type { ClientOptions } from "./ClientOptions.ts"
import * as Options from "./ClientOptions.ts"
import { type Client, GatewayClient } from "./GatewayClient.ts"

type Groups = typeof Api extends HttpApi.HttpApi<infer _Id, infer G> ? G : never

type RequestOf<E extends HttpApiEndpoint.ConstraintRequest> = HttpApiEndpoint.ClientRequest<
  E["~Params"],
  E["~Query"],
  E["~Payload"],
  E["~Headers"],
  "decoded-only"
  // biome-ignore lint/suspicious/noConfusingVoidType: an endpoint without a request takes no argument, as the HttpApi client types it
> extends infer R ? R extends void ? void : { readonly [K in Exclude<keyof R, "responseMode" | "sseOptions">]: R[K] }
  : never

/**
 * Per-call options.
 *
 * @since 0.1.0
 * @public
 */
export interface CallOptions {
  /** Aborts the call (and any retry wait) when signalled; the promise then rejects. */
  readonly signal?: AbortSignal | undefined
}

/**
 * The promise form of one operation.
 *
 * @since 0.1.0
 * @public
 */
export type Call<E extends HttpApiEndpoint.ConstraintRequest> = (
  request: RequestOf<E>,
  options?: CallOptions
) => Promise<HttpApiClient.SuccessType<E["~Success"]>>

type GroupCalls<G extends HttpApiGroup.Constraint> = {
  readonly [E in Extract<HttpApiGroup.Endpoints<G>, HttpApiEndpoint.ConstraintRequest> as E["identifier"]]: Call<E>
}

/**
 * Every operation of the contract in promise form, grouped as in {@link Client}.
 *
 * @since 0.1.0
 * @public
 */
export type Operations =
  & { readonly [G in Extract<Groups, { readonly topLevel: false }> as HttpApiGroup.Identifier<G>]: GroupCalls<G> }
  & GroupCalls<Extract<Groups, { readonly topLevel: true }>>

type AnyMethod = (request: unknown) => Effect.Effect<unknown, unknown>

/** A group of operations, looked up by the contract's name for it. */
const memberOf = (holder: object, name: string): object => Reflect.get(holder, name)

/**
 * @since 0.1.0
 */
export interface Switchyard extends Operations {}

/**
 * @since 0.1.0
 */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the interface declares the operations the constructor installs
export class Switchyard {
  readonly #runtime: ManagedRuntime.ManagedRuntime<GatewayClient, Options.InvalidClientOptions>

  /**
   * The base URL requests go to, after the environment and the defaults are applied.
   */
  readonly baseUrl: string

  constructor(options: ClientOptions = {}) {
    const resolved = Effect.runSync(Effect.result(Options.resolve(options)))
    if (resolved._tag === "Failure") throw resolved.failure
    this.baseUrl = resolved.success.baseUrl
    this.#runtime = ManagedRuntime.make(GatewayClient.layerFetch({
      baseUrl: resolved.success.baseUrl,
      ...(resolved.success.apiKey._tag === "Some" ? { apiKey: resolved.success.apiKey.value } : {}),
      retry: resolved.success.retry,
      timeout: resolved.success.timeout,
      headers: resolved.success.headers
    }))
    // The operations are installed by name as the contract lists them (the interface above types them).
    HttpApiRuntime.reflect(Api, {
      onGroup: ({ group }) => {
        if (!group.topLevel) Reflect.set(this, group.identifier, {})
      },
      onEndpoint: ({ endpoint, group }) => {
        const call = (request: unknown, callOptions?: CallOptions) =>
          this.#runtime.runPromise(
            Effect.flatMap(GatewayClient, (client: Client) => {
              const method: AnyMethod = Reflect.get(group.topLevel ? client : memberOf(client, group.identifier), endpoint.identifier)
              return method(request)
            }),
            callOptions?.signal === undefined ? undefined : { signal: callOptions.signal }
          )
        Reflect.set(group.topLevel ? this : memberOf(this, group.identifier), endpoint.identifier, call)
      }
    })
  }

  /**
   * Closes idle connections and releases the client. Later calls reject.
   */
  close(): Promise<void> {
    return this.#runtime.dispose()
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }
}
