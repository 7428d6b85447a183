/**
 * What one endpoint is asked: the provider parameters of a request that the endpoint supports,
 * and the vector width it should answer with.
 *
 * **Details**
 *
 * With `require_parameters` omitted or `false`, an endpoint that lacks a parameter the request
 * sent still serves, without that parameter: it receives only the parameters listed in its
 * `supported_parameters`. So an endpoint without `dimensions` answers at its own width, and that
 * width is what its answer is checked against. Routing prefers the endpoints that support every
 * parameter sent ({@link missing} is empty) over those that do not.
 *
 * `encoding_format` is honoured by the gateway for every endpoint (it converts between floats
 * and base64), so it never makes an endpoint less preferred.
 *
 * @since 0.1.0
 */
import { type Endpoint, widthOf } from "../catalog/Catalog.ts"
import type { EmbeddingRequest, ProviderParameter } from "../schema/EmbeddingRequest.ts"

/**
 * The parameters sent to one endpoint, and the width its vectors must have.
 *
 * @since 0.1.0
 */
export interface Asked {
  readonly dimensions?: number
  readonly inputType?: string
  readonly user?: string
  /** The width the endpoint was asked for: `dimensions` when it was sent, else its own. */
  readonly width: number
}

/**
 * The parameters one endpoint receives for a request.
 *
 * @since 0.1.0
 */
export const forEndpoint = (
  request: Pick<EmbeddingRequest, "dimensions" | "input_type" | "user">,
  endpoint: Pick<Endpoint, "supported_parameters" | "dimensions">
): Asked => {
  const supports = (name: ProviderParameter) => endpoint.supported_parameters.includes(name)
  const dimensions = request.dimensions !== undefined && supports("dimensions") ? request.dimensions : undefined
  return {
    ...(dimensions !== undefined ? { dimensions } : {}),
    ...(request.input_type !== undefined && supports("input_type") ? { inputType: request.input_type } : {}),
    ...(request.user !== undefined && supports("user") ? { user: request.user } : {}),
    width: dimensions ?? widthOf(endpoint)
  }
}

/**
 * The sent parameters an endpoint does not support and would be served without
 * (`encoding_format` never counts: the gateway honours it for every endpoint).
 *
 * @since 0.1.0
 */
export const missing = (
  sentParameters: ReadonlyArray<string>,
  endpoint: Pick<Endpoint, "supported_parameters">
): ReadonlyArray<string> =>
  sentParameters.filter((p) => p !== "encoding_format" && !endpoint.supported_parameters.includes(p))
