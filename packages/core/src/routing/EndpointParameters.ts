/**
 * What one endpoint takes and what it is sent: the one definition of a request's parameters at
 * an endpoint, read by routing (`require_parameters`, the preference for endpoints that take
 * every parameter), by the attempt that calls it, the cache, the batch runner and the answer.
 *
 * **Details**
 *
 * - A parameter is *native* at an endpoint when its `supported_parameters` lists it: the
 *   provider receives it. `encoding_format`, `output_dtype` and `truncate` are honoured by the
 *   gateway for every endpoint ({@link gatewayMade}): they never count as missing, so
 *   `require_parameters: true` never excludes an endpoint for them, and no endpoint is less
 *   preferred for them.
 * - Widths (`dimensions`): a native `dimensions` is sent and the answer checked at that width.
 *   On a Matryoshka model (`matryoshka` in the catalog) served without native `dimensions`, the
 *   provider answers its full width and the gateway keeps the first `n` numbers, re-normalised
 *   (`vectors/Matryoshka`): every answer of such a model has the width asked. A model that is
 *   not Matryoshka, at an endpoint without `dimensions`, answers its own width, and `dimensions`
 *   is named in the answer's `ignored_parameters` (the provider ignores what it does not take).
 *   `require_parameters: true` still uses only endpoints with native `dimensions`.
 * - Types (`output_dtype`): made by the provider when the endpoint lists it in `output_dtypes`
 *   and the gateway needs no float of it (no cut, no windows to average); otherwise the gateway
 *   makes it from the floats (`vectors/OutputDtype`).
 * - Long inputs (`truncate`): see {@link LongInputs}.
 *
 * @since 0.1.0
 */
import { type Endpoint, type Provider, widthOf } from "../catalog/Catalog.ts"
import * as LongInputSupport from "../catalog/LongInputs.ts"
import type { VectorFacts } from "../schema/Activity.ts"
import type { EmbeddingRequest, Truncate } from "../schema/EmbeddingRequest.ts"
import * as Matryoshka from "../vectors/Matryoshka.ts"
import type { OutputDtype, QuantizedDtype } from "../vectors/OutputDtype.ts"

/**
 * The parameters the gateway honours itself for every endpoint: they never count as missing.
 *
 * @since 0.12.0
 */
const gatewayMade: ReadonlyArray<string> = ["encoding_format", "output_dtype", "truncate"]

/**
 * Who made a property of the answer: the provider, or the gateway from the provider's floats.
 *
 * @since 0.12.0
 */
type MadeBy = "provider" | "gateway"

/**
 * What an endpoint does with inputs longer than its `max_input_tokens`, for the request's
 * `truncate`.
 *
 * - `native`: the provider's own flag: `none` tells it to refuse rather than cut, `start` or
 *   `end` makes it cut that end; absent, nothing is sent (it refuses by itself, or it cannot be
 *   told).
 * - `gateway`: what the gateway does before sending: `refuse` an input it counted over the limit
 *   (a 400 before any upstream call), cut it (`start`, `end`) or split it into windows
 *   (`chunk`); absent, nothing.
 * - `counter`: how the gateway counts (`catalog/LongInputs`).
 *
 * @since 0.12.0
 */
export interface LongInputs {
  readonly mode: Truncate
  readonly maxInputTokens: number | undefined
  readonly native: "none" | "start" | "end" | undefined
  readonly gateway: "refuse" | "start" | "end" | "chunk" | undefined
  readonly counter: LongInputSupport.Counter
}

/**
 * The parameters sent to one endpoint, what its answer must be, and what the gateway makes of it.
 *
 * @since 0.1.0
 */
export interface Asked {
  readonly dimensions?: number
  readonly inputType?: string
  readonly user?: string
  /** A quantized type the provider is asked for natively. */
  readonly outputDtype?: QuantizedDtype
  /** The width the provider's vectors must have: `dimensions` when sent, else the endpoint's own. */
  readonly width: number
  /** The width of the answer: the asked width, or the endpoint's own when it could not be had. */
  readonly answerWidth: number
  /** Who made the answer's width: `provider` also when it is the model's own. */
  readonly widthBy: MadeBy
  /** The answer's type, and who made it (`provider` for floats). */
  readonly dtype: OutputDtype
  readonly dtypeBy: MadeBy
  readonly encoding: "float" | "base64"
  readonly long: LongInputs
  /**
   * Whether the answer is the provider's vectors as they came (no cut, no type, no input cut or
   * split by the gateway, which may still refuse a long one): the gateway only re-encodes them.
   */
  readonly plain: boolean
}

/**
 * The sent parameters an endpoint does not take natively ({@link gatewayMade} never counts):
 * what `require_parameters: true` excludes an endpoint for, and what makes it less preferred.
 *
 * @since 0.1.0
 */
export const missing = (
  sentParameters: ReadonlyArray<string>,
  endpoint: Pick<Endpoint, "supported_parameters">
): ReadonlyArray<string> =>
  sentParameters.filter((p) => !gatewayMade.includes(p) && !endpoint.supported_parameters.includes(p))

/**
 * The sent parameters that neither the endpoint nor the gateway honoured: {@link missing}, less
 * `dimensions` on a Matryoshka model (the gateway cut the vector). The answer names them in
 * `switchyard.ignored_parameters`.
 *
 * @since 0.12.0
 */
export const ignored = (
  sentParameters: ReadonlyArray<string>,
  endpoint: Pick<Endpoint, "supported_parameters" | "matryoshka">
): ReadonlyArray<string> =>
  missing(sentParameters, endpoint).filter((p) => p !== "dimensions" || endpoint.matryoshka === undefined)

/**
 * Whether an endpoint can answer a width: any endpoint of a model that is not Matryoshka can
 * (its own width, or the provider's answer to `dimensions`), a Matryoshka one when the model
 * allows the width (a width above the endpoint's own only through a native `dimensions`).
 *
 * @since 0.12.0
 */
export const offersWidth = (endpoint: Pick<Endpoint, "matryoshka" | "dimensions" | "supported_parameters">, width: number | undefined): boolean =>
  width === undefined || endpoint.matryoshka === undefined ||
  (Matryoshka.allows(endpoint, width) && (width <= widthOf(endpoint) || endpoint.supported_parameters.includes("dimensions")))

/**
 * What the endpoint does with long inputs for a `truncate` mode (see {@link LongInputs}).
 *
 * @since 0.12.0
 */
export const longInputs = (
  mode: Truncate,
  provider: Pick<Provider, "adapter" | "dialect">,
  endpoint: Pick<Endpoint, "model" | "upstream_model" | "max_input_tokens">
): LongInputs => {
  const support = LongInputSupport.supportOf(provider, endpoint)
  const counter = LongInputSupport.counterOf(provider, endpoint)
  const exact = LongInputSupport.isExact(counter)
  const maxInputTokens = endpoint.max_input_tokens
  const told = support.refuses ? "none" as const : undefined
  const base = { mode, maxInputTokens, counter }
  if (maxInputTokens === undefined) {
    const native = mode === "start" || mode === "end" ? (support.cuts.includes(mode) ? mode : undefined) : told
    return { ...base, native, gateway: undefined }
  }
  switch (mode) {
    case "none":
      return { ...base, native: told, gateway: exact ? "refuse" : undefined }
    case "start":
    case "end":
      return support.cuts.includes(mode) ? { ...base, native: mode, gateway: undefined } : { ...base, native: told, gateway: mode }
    case "chunk":
      return { ...base, native: told, gateway: "chunk" }
  }
}

type AskedRequest = Pick<EmbeddingRequest, "dimensions" | "input_type" | "user" | "output_dtype" | "truncate" | "encoding_format">
type AskedEndpoint = Pick<Endpoint, "supported_parameters" | "dimensions" | "matryoshka" | "output_dtypes" | "model" | "upstream_model" | "max_input_tokens">

// A request's answer at an endpoint is read by its attempt, its cache lookup, its admission, its
// settlement and its record: worked out once per request object and endpoint object.
const known = new WeakMap<object, WeakMap<object, Asked>>()

/**
 * What one endpoint is sent for a request, and what its answer must be and becomes (the same
 * object for the same request and endpoint objects).
 *
 * @since 0.1.0
 */
export const forEndpoint = (request: AskedRequest, provider: Pick<Provider, "adapter" | "dialect">, endpoint: AskedEndpoint): Asked => {
  let byEndpoint = known.get(request)
  if (byEndpoint === undefined) {
    byEndpoint = new WeakMap()
    known.set(request, byEndpoint)
  }
  let asked = byEndpoint.get(endpoint)
  if (asked === undefined) {
    asked = askedOf(request, provider, endpoint)
    byEndpoint.set(endpoint, asked)
  }
  return asked
}

const askedOf = (request: AskedRequest, provider: Pick<Provider, "adapter" | "dialect">, endpoint: AskedEndpoint): Asked => {
  const supports = (name: string) => endpoint.supported_parameters.includes(name)
  const own = widthOf(endpoint)
  const asked = request.dimensions
  const native = asked !== undefined && supports("dimensions") ? asked : undefined
  const cut = asked !== undefined && native === undefined && endpoint.matryoshka !== undefined && asked < own
  const answerWidth = native ?? (cut ? asked! : own)
  const long = longInputs(request.truncate ?? "none", provider, endpoint)
  const dtype = request.output_dtype ?? "float"
  const nativeDtype = dtype !== "float" && !cut && long.gateway !== "chunk" && endpoint.output_dtypes?.includes(dtype) === true
    ? dtype
    : undefined
  const dtypeBy: MadeBy = dtype === "float" || nativeDtype !== undefined ? "provider" : "gateway"
  return {
    ...(native !== undefined ? { dimensions: native } : {}),
    ...(request.input_type !== undefined && supports("input_type") ? { inputType: request.input_type } : {}),
    ...(request.user !== undefined && supports("user") ? { user: request.user } : {}),
    ...(nativeDtype !== undefined ? { outputDtype: nativeDtype } : {}),
    width: native ?? own,
    answerWidth,
    widthBy: cut ? "gateway" : "provider",
    dtype,
    dtypeBy,
    encoding: request.encoding_format ?? "float",
    long,
    plain: !cut && dtype === "float" && (long.gateway === undefined || long.gateway === "refuse")
  }
}

/**
 * What the generation record says of the vectors an endpoint answered (`schema/Activity`'s
 * `VectorFacts`): their width and type, who made each, and the long-input mode and who applies it
 * at this endpoint (the provider's own flag, or the gateway's count).
 *
 * @since 0.12.0
 */
export const factsOf = (asked: Asked): typeof VectorFacts.Type => ({
  dimensions: asked.answerWidth,
  dimensions_by: asked.widthBy,
  dtype: asked.dtype,
  dtype_by: asked.dtypeBy,
  truncate: asked.long.mode,
  truncate_by: asked.long.gateway === undefined ? "provider" : "gateway"
})
