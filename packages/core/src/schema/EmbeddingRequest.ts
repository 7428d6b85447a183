/**
 * The body of `POST /embeddings`, and the facts about it that routing needs.
 *
 * **Details**
 *
 * `input` takes exactly one of five forms: a non-empty string; a non-empty array of non-empty
 * strings; a non-empty array of token ids (integers >= 0); a non-empty array of non-empty
 * token-id arrays; or a non-empty array of multimodal inputs, each `{ content: [part, ...] }`
 * with at least one part (text, image_url, input_audio, input_video, input_file).
 *
 * An array is checked item by item, then for sameness of form, so an error names the item
 * that broke a rule (`input[3]: Expected a value greater than or equal to 0`) rather than
 * listing why each of the four array forms failed.
 *
 * `model` is `<vendor>/<model_name>`, or a bare `<model_name>` resolved by the gateway. Unknown top-level properties are ignored
 * (dropped), as OpenRouter does; the nested `provider` object refuses unknown properties.
 *
 * @since 0.1.0
 */
import { Effect, Schema, SchemaTransformation } from "effect"
import { BadRequest } from "./ApiError.ts"
import * as DecodeIssue from "./DecodeIssue.ts"
import { OutputDtype } from "../vectors/OutputDtype.ts"
import { ProviderPreferences } from "./ProviderPreferences.ts"
import { TraceConfig } from "./TraceConfig.ts"

const NonEmptyString = Schema.String.check(Schema.isMinLength(1))

/**
 * A token id: an integer >= 0.
 *
 * @since 0.1.0
 */
const TokenId = Schema.Int.check(Schema.isGreaterThanOrEqualTo(0))

const TokenIds = Schema.Array(TokenId).check(Schema.isMinLength(1))

/**
 * A media payload: `data` is base64 (commonly a data URL), `format` a free label.
 *
 * @since 0.1.0
 */
const MultimodalMedia = Schema.Struct({
  data: Schema.String,
  format: Schema.optionalKey(Schema.String)
})

/**
 * One part of a multimodal input.
 *
 * @since 0.1.0
 */
const ContentPart = Schema.Union([
  Schema.Struct({ type: Schema.Literal("text"), text: NonEmptyString }),
  Schema.Struct({ type: Schema.Literal("image_url"), image_url: Schema.Struct({ url: Schema.String }) }),
  Schema.Struct({ type: Schema.Literal("input_audio"), input_audio: MultimodalMedia }),
  Schema.Struct({ type: Schema.Literal("input_video"), input_video: MultimodalMedia }),
  Schema.Struct({ type: Schema.Literal("input_file"), input_file: MultimodalMedia })
]).annotate({ expected: "a content part whose type is text, image_url, input_audio, input_video or input_file" })

/**
 * @since 0.1.0
 */
type ContentPart = typeof ContentPart.Type

/**
 * One multimodal input: the parts embedded together into one vector.
 *
 * @since 0.1.0
 */
const MultimodalInput = Schema.Struct({
  content: Schema.Array(ContentPart).check(Schema.isMinLength(1))
})

/**
 * @since 0.1.0
 */
type MultimodalInput = typeof MultimodalInput.Type

type Form = "string" | "token id" | "token-id array" | "multimodal input"

const formOf = (item: unknown): Form =>
  typeof item === "string"
    ? "string"
    : typeof item === "number"
    ? "token id"
    : Array.isArray(item)
    ? "token-id array"
    : "multimodal input"

const sameForm = Schema.makeFilter((items: ReadonlyArray<unknown>) => {
  const first = formOf(items[0])
  const index = items.findIndex((item) => formOf(item) !== first)
  return index === -1
    ? undefined
    : { path: [index], issue: `every item of input must have the same form: item 0 is a ${first}, this one is a ${formOf(items[index])}` }
}, { expected: "items of one form" })

const Item = Schema.Union([NonEmptyString, TokenId, TokenIds, MultimodalInput])

const InputForms = Schema.Union([
  NonEmptyString,
  Schema.Array(NonEmptyString),
  Schema.Array(TokenId),
  Schema.Array(TokenIds),
  Schema.Array(MultimodalInput)
])

/**
 * `input`, in one of its five forms.
 *
 * @since 0.1.0
 */
const EmbeddingInput = Schema.Union([
  NonEmptyString,
  Schema.Array(Item).check(Schema.isMinLength(1), sameForm)
]).annotate({ expected: "a non-empty string or a non-empty array" }).pipe(Schema.decodeTo(InputForms, SchemaTransformation.passthrough({ strict: false })))

/**
 * A model identifier, `<vendor>/<model_name>`.
 *
 * @since 0.1.0
 */
export const ModelSlug = Schema.String.check(
  Schema.isPattern(/^[^/\s]+\/\S+$/u, { expected: "a model slug of the form <vendor>/<model_name>" })
)

/**
 * A request's `model`: `<vendor>/<model_name>`, or a bare `<model_name>` that the gateway
 * resolves when exactly one served model has that name (`ModelName.resolve`).
 *
 * @since 0.1.0
 */
export const RequestModel = Schema.String.check(
  Schema.isPattern(/^[^/\s]+(\/\S+)?$/u, {
    expected: "a model id such as openai/text-embedding-3-small (the vendor may be left out when only one served model has that name)"
  })
)

/**
 * The request parameters that shape what a provider is asked or answers, as opposed to the
 * routing and bookkeeping fields (`model`, `input`, `provider`, `session_id`, `trace`). Of these,
 * `require_parameters` counts those a provider takes natively; `encoding_format`,
 * `output_dtype` and `truncate` the gateway honours for every endpoint
 * (`routing/EndpointParameters`'s `gatewayMade`).
 *
 * @since 0.1.0
 */
const providerParameters = ["dimensions", "encoding_format", "input_type", "user", "output_dtype", "truncate"] as const

/**
 * @since 0.1.0
 */
export type ProviderParameter = typeof providerParameters[number]

/**
 * What the gateway does with an input longer than the serving endpoint's `max_input_tokens`:
 * `none` (the default) refuses it with a 400 (before any upstream call where the gateway can
 * count the tokens, else from the provider's refusal, told not to cut); `start` and `end` cut
 * it at that end (the provider's own truncation where it has one, else the gateway cuts by
 * tokens); `chunk` embeds it as windows within the limit and answers their token-weighted mean,
 * re-normalised (`vectors/Windows`).
 *
 * @since 0.12.0
 */
export const Truncate = Schema.Literals(["none", "start", "end", "chunk"])

/**
 * @since 0.12.0
 */
export type Truncate = typeof Truncate.Type

/**
 * The `POST /embeddings` body. Beside OpenRouter's fields, `output_dtype` (the vectors' type,
 * `vectors/OutputDtype`) and `truncate` ({@link Truncate}).
 *
 * @since 0.1.0
 */
export const EmbeddingRequest = Schema.Struct({
  input: EmbeddingInput,
  model: RequestModel,
  dimensions: Schema.optionalKey(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1))),
  encoding_format: Schema.optionalKey(Schema.Literals(["float", "base64"])),
  input_type: Schema.optionalKey(Schema.String),
  output_dtype: Schema.optionalKey(OutputDtype),
  truncate: Schema.optionalKey(Truncate),
  provider: Schema.optionalKey(Schema.NullOr(ProviderPreferences)),
  session_id: Schema.optionalKey(Schema.String.check(Schema.isMaxCodePoints(256))),
  trace: Schema.optionalKey(TraceConfig),
  user: Schema.optionalKey(Schema.String)
}).annotate({ identifier: "EmbeddingRequest" })

/**
 * @since 0.1.0
 */
export type EmbeddingRequest = typeof EmbeddingRequest.Type

/**
 * Decodes an unknown JSON body into an {@link EmbeddingRequest}, failing with a 400 whose
 * message names every broken rule by field (`model: Missing key; input[2]: ...`) and whose
 * `metadata.issues` lists them as `{ path, message }`.
 *
 * **When to use**
 *
 * Outside HttpApi (tests, batch tools), or to build the 400 of the API's schema-error
 * middleware the same way.
 *
 * @since 0.1.0
 */
export const decode = (body: unknown): Effect.Effect<EmbeddingRequest, BadRequest> =>
  Schema.decodeUnknownEffect(EmbeddingRequest)(body, { errors: "all" }).pipe(
    Effect.mapError((error) => {
      const issues = DecodeIssue.fromSchemaError(error)
      return new BadRequest({
        message: `Invalid request body: ${DecodeIssue.summarize(issues)}`,
        metadata: { issues }
      })
    })
  )

/**
 * The kinds of input a request carries, which an endpoint must accept.
 *
 * @since 0.1.0
 */
export const InputModality = Schema.Literals(["text", "tokens", "image", "audio", "video", "file"])

/**
 * @since 0.1.0
 */
export type InputModality = typeof InputModality.Type

const partModality: Record<ContentPart["type"], InputModality> = {
  text: "text",
  image_url: "image",
  input_audio: "audio",
  input_video: "video",
  input_file: "file"
}

/**
 * The modalities of a request's input: `text` for strings, `tokens` for token ids, and the
 * kinds of the parts of multimodal inputs.
 *
 * @since 0.1.0
 */
export const inputModalities = (request: Pick<EmbeddingRequest, "input">): ReadonlyArray<InputModality> => {
  let known = modalities.get(request)
  if (known === undefined) {
    known = modalitiesOf(request)
    modalities.set(request, known)
  }
  return known
}

// Read by routing and again by the response: worked out once per request object.
const modalities = new WeakMap<object, ReadonlyArray<InputModality>>()
const sent = new WeakMap<object, ReadonlyArray<ProviderParameter>>()

const modalitiesOf = (request: Pick<EmbeddingRequest, "input">): ReadonlyArray<InputModality> => {
  const input = request.input
  if (typeof input === "string") return ["text"]
  const first = input[0]
  if (typeof first === "string") return ["text"]
  if (typeof first === "number" || Array.isArray(first)) return ["tokens"]
  const kinds = new Set<InputModality>()
  for (const item of input as ReadonlyArray<MultimodalInput>) {
    for (const part of item.content) kinds.add(partModality[part.type])
  }
  return [...kinds]
}

/**
 * How many vectors the request asks for: 1 for a string or a single token-id array, else the
 * number of items.
 *
 * @since 0.1.0
 */
export const inputCount = (request: Pick<EmbeddingRequest, "input">): number => {
  const input = request.input
  if (typeof input === "string") return 1
  return typeof input[0] === "number" ? 1 : input.length
}

/**
 * The provider parameters the request actually sends (see {@link providerParameters}).
 *
 * @since 0.1.0
 */
export const sentParameters = (request: EmbeddingRequest): ReadonlyArray<ProviderParameter> => {
  let known = sent.get(request)
  if (known === undefined) {
    known = providerParameters.filter((key) => request[key] !== undefined)
    sent.set(request, known)
  }
  return known
}
