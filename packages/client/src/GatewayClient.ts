/**
 * The typed Switchyard client for Effect programs, generated from the core HTTP contract.
 *
 * **When to use**
 *
 * In Effect code: `yield* GatewayClient` gives one method per operation of the gateway, grouped
 * as the contract groups them (`client.keys.list(...)`, `client.interns.update(...)`; top-level
 * operations such as `client.health()` sit on the client itself). Outside Effect, use
 * {@link Switchyard} instead.
 *
 * **Details**
 *
 * The methods are derived from `Api` in `@switchyard/core`: request shapes, success values and
 * errors are the contract's, so an operation added to the contract appears here with no change.
 * A method fails with the endpoint's typed errors (`Forbidden`, `InternNotFound`...), with
 * `HttpClientError` when no usable answer arrived (transport failure, undeclared status), or
 * with `SchemaError` when the request breaks the contract's schema before it is sent.
 *
 * Transient failures are retried as {@link RetryPolicy} describes; the error seen is the last
 * attempt's.
 *
 * @see {@link ClientOptions} for the base URL, the key and the retry bounds
 * @since 0.1.0
 */
import { Api } from "@switchyard/core/api/Api"
import { Authorization } from "@switchyard/core/api/Authorization"
import { Context, Effect, Layer, Option } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest } from "effect/http"
import { HttpApiClient, HttpApiMiddleware } from "effect/http-api"
import packageJson from "../package.json" with { type: "json" }
import * as ClientOptions from "./ClientOptions.ts"
import * as RetryPolicy from "./RetryPolicy.ts"

/**
 * The client: one method per operation of the contract.
 *
 * @since 0.1.0
 */
export type Client = HttpApiClient.ForApi<typeof Api>

/**
 * The value sent as `User-Agent`.
 *
 * @since 0.1.0
 */
const userAgent = `switchyard-client/${packageJson.version}`

const authorization = (options: ClientOptions.ResolvedOptions) =>
  HttpApiMiddleware.layerClient(Authorization, ({ next, request }) =>
    next(Option.match(options.apiKey, {
      onNone: () => request,
      onSome: (key) => HttpClientRequest.bearerToken(request, key)
    })))

/**
 * Builds a client from options (falling back on the environment) over the `HttpClient` in
 * context.
 *
 * @since 0.1.0
 */
export const make = (options?: ClientOptions.ClientOptions): Effect.Effect<
  Client,
  ClientOptions.InvalidClientOptions,
  HttpClient.HttpClient
> =>
  Effect.flatMap(ClientOptions.resolve(options), (resolved) =>
    HttpApiClient.make(Api, {
      baseUrl: resolved.root,
      transformClient: (client) =>
        client.pipe(
          HttpClient.mapRequest((request) =>
            HttpClientRequest.setHeader(HttpClientRequest.setHeaders(request, resolved.headers), "user-agent", userAgent)
          ),
          RetryPolicy.apply(resolved.retry, { timeout: resolved.timeout })
        )
    }).pipe(Effect.provide(authorization(resolved))))

/**
 * The service holding a {@link Client}.
 *
 * @since 0.1.0
 */
export class GatewayClient extends Context.Service<GatewayClient, Client>()("@switchyard/client/GatewayClient") {
  /**
   * The client over the `HttpClient` the caller provides.
   *
   * @since 0.1.0
   */
  static readonly layer = (options?: ClientOptions.ClientOptions): Layer.Layer<
    GatewayClient,
    ClientOptions.InvalidClientOptions,
    HttpClient.HttpClient
  > => Layer.effect(GatewayClient, make(options))

  /**
   * The client over the platform's `fetch`.
   *
   * @since 0.1.0
   */
  static readonly layerFetch = (options?: ClientOptions.ClientOptions): Layer.Layer<
    GatewayClient,
    ClientOptions.InvalidClientOptions
  > => GatewayClient.layer(options).pipe(Layer.provide(FetchHttpClient.layer))
}
