/**
 * The embedding capability of an upstream provider: the port every adapter (OpenAI-compatible,
 * Cohere, Voyage, Gemini, the in-process local model) implements.
 *
 * **Details**
 *
 * The gateway turns a client's request into one {@link UpstreamRequest} per attempt and hands it,
 * with the {@link Connection} of the chosen provider, to {@link EmbeddingProvider}. The adapter
 * maps it to the provider's wire format, sends it, validates the answer and returns an
 * {@link EmbeddingResult} whose vectors are already in the encoding the client asked for. Every
 * failure is one `UpstreamError` (see `upstream/UpstreamError`), built by the adapter with its
 * reason already decided, so the gateway maps it to an HTTP status and a fallback decision
 * without knowing which adapter produced it.
 *
 * This module holds types only: it performs no I/O.
 *
 * @since 0.1.0
 */
import { Context, Schema } from "effect"
import type { Effect, Redacted } from "effect"
import type { Dialect } from "../catalog/Catalog.ts"
import type { UpstreamError } from "../upstream/UpstreamError.ts"
import { QuantizedDtype } from "../vectors/OutputDtype.ts"

/**
 * A media payload: base64 data (commonly a `data:` URL) and an optional format label
 * (`wav`, `mp4`, `pdf`...).
 *
 * @since 0.1.0
 */
export const Media = Schema.Struct({
  data: Schema.String,
  format: Schema.optionalKey(Schema.String)
})

/**
 * @since 0.1.0
 */
export type Media = typeof Media.Type

/**
 * A text part of a multimodal item.
 *
 * @since 0.1.0
 */
const TextPart = Schema.Struct({ type: Schema.Literal("text"), text: Schema.String })

/**
 * An image part: `url` is an `http(s)` URL or a `data:` URL.
 *
 * @since 0.1.0
 */
const ImageUrlPart = Schema.Struct({
  type: Schema.Literal("image_url"),
  image_url: Schema.Struct({ url: Schema.String })
})

/**
 * An audio part.
 *
 * @since 0.1.0
 */
const AudioPart = Schema.Struct({ type: Schema.Literal("input_audio"), input_audio: Media })

/**
 * A video part.
 *
 * @since 0.1.0
 */
const VideoPart = Schema.Struct({ type: Schema.Literal("input_video"), input_video: Media })

/**
 * A file part (a PDF, for instance).
 *
 * @since 0.1.0
 */
const FilePart = Schema.Struct({ type: Schema.Literal("input_file"), input_file: Media })

/**
 * One part of a multimodal item, in the public API's wire shape (`type` plus a field named after
 * it), so a request's `content` array passes through unchanged.
 *
 * @since 0.1.0
 */
export const ContentPart = Schema.Union([TextPart, ImageUrlPart, AudioPart, VideoPart, FilePart])

/**
 * @since 0.1.0
 */
export type ContentPart = typeof ContentPart.Type

/**
 * Texts to embed, one vector each.
 *
 * @since 0.1.0
 */
const Texts = Schema.TaggedStruct("Texts", { texts: Schema.Array(Schema.String) })

/**
 * Token-id sequences to embed, one vector each.
 *
 * @since 0.1.0
 */
const Tokens = Schema.TaggedStruct("Tokens", { tokens: Schema.Array(Schema.Array(Schema.Int)) })

/**
 * Multimodal items to embed, one vector each; an item is the list of its parts.
 *
 * @since 0.1.0
 */
const Multimodal = Schema.TaggedStruct("Multimodal", {
  items: Schema.Array(Schema.Array(ContentPart))
})

/**
 * The normalized input of an upstream request.
 *
 * **Details**
 *
 * The public API's five `input` forms collapse to three: a single string becomes a one-element
 * `Texts`, a single token array a one-element `Tokens`, and `[{ content }]` becomes `Multimodal`
 * with the `content` arrays as items.
 *
 * @since 0.1.0
 */
export const EmbeddingInput = Schema.Union([Texts, Tokens, Multimodal])

/**
 * @since 0.1.0
 */
export type EmbeddingInput = typeof EmbeddingInput.Type

/**
 * How vectors travel: JSON arrays of numbers, or base64 of little-endian float32 bytes.
 *
 * @since 0.1.0
 */
const EncodingFormat = Schema.Literals(["float", "base64"])

/**
 * One attempt's request, already reduced to what the chosen endpoint should receive.
 *
 * **Details**
 *
 * `upstreamModel` is the provider's own model name (the catalog's `upstream_model`).
 * `dimensions`, `inputType` and `user` are present only when the client sent them and the
 * endpoint is to receive them; the adapter sends what it is given and drops nothing silently
 * except `inputType` values its provider has no equivalent for.
 *
 * `outputDtype` asks the provider for a quantized type it makes natively (the catalog's
 * `output_dtypes`): its vectors then come back as that type's numbers (JSON integers, packed
 * bytes for the binary types), with `encodingFormat` `float`. `truncate` is the provider's own
 * long-input flag (`routing/EndpointParameters`'s `LongInputs.native`): `none` tells it to refuse
 * rather than cut, `start` or `end` to cut that end; `maxInputTokens` is the endpoint's limit,
 * for an adapter that counts what a cut embedded.
 *
 * **Gotchas**
 *
 * The gateway checks the width of what the adapter returns (once, for every adapter); the
 * adapter checks that the vectors are well formed, one per input, of one width.
 *
 * @since 0.1.0
 */
export const UpstreamRequest = Schema.Struct({
  upstreamModel: Schema.String,
  input: EmbeddingInput,
  dimensions: Schema.optionalKey(Schema.Int),
  encodingFormat: EncodingFormat,
  inputType: Schema.optionalKey(Schema.String),
  user: Schema.optionalKey(Schema.String),
  outputDtype: Schema.optionalKey(QuantizedDtype),
  truncate: Schema.optionalKey(Schema.Literals(["none", "start", "end"])),
  maxInputTokens: Schema.optionalKey(Schema.Int)
})

/**
 * @since 0.1.0
 */
export type UpstreamRequest = typeof UpstreamRequest.Type

/**
 * Where and how to reach one provider.
 *
 * **Details**
 *
 * `baseUrl` includes the API's version segment (`https://api.openai.com/v1`,
 * `https://api.cohere.com/v2`, `https://api.voyageai.com/v1`,
 * `https://generativelanguage.googleapis.com/v1beta`); each adapter appends its own path.
 * `headers` are sent with every request, after the adapter's own. `dialect` is the catalog's
 * flavour of an OpenAI-compatible API (`generic` when absent); other adapters ignore it. An
 * attempt's time limit is kept around the adapter's call by the gateway, not by the adapter.
 *
 * @since 0.1.0
 */
export interface Connection {
  /** The provider's slug, which its spans and failures name (absent: "upstream"). */
  readonly provider?: string
  readonly baseUrl: string
  readonly apiKey: Redacted.Redacted<string> | undefined
  readonly headers?: Readonly<Record<string, string>>
  readonly dialect?: Dialect
  /** The AWS region a `bedrock` provider signs its requests for. */
  readonly region?: string
  /** A cloud adapter's placement: Azure's `api-version`, Vertex's project and location. */
  readonly apiVersion?: string
  readonly project?: string
  readonly location?: string
  /** Where a Vertex provider's rerank calls go: its `base_url` when it names one, else the Ranking API's host. */
  readonly rankingBaseUrl?: string
  /**
   * Where a cloud adapter takes its token from when it has no API key: `entra` (Azure's
   * DefaultAzureCredential), or Google's Application Default Credentials (with a service-account file).
   */
  readonly identity?: { readonly kind: "entra" } | { readonly kind: "google"; readonly credentialsFile?: string }
  /**
   * Where a Bedrock or Vertex provider's batch API keeps its files (the provider's `batch`):
   * Bedrock's S3 prefix, service role and control plane, Vertex's Cloud Storage prefix, and a
   * storage endpoint of the operator's own.
   */
  readonly batch?: {
    readonly s3Uri?: string
    readonly roleArn?: string
    readonly gcsUri?: string
    readonly baseUrl?: string
    readonly storageUrl?: string
  }
}

/**
 * One vector of a result: floats, or base64 of little-endian float32 bytes, as the request's
 * `encodingFormat` asked.
 *
 * @since 0.1.0
 */
export interface Embedding {
  readonly index: number
  readonly embedding: ReadonlyArray<number> | string
}

/**
 * Per-modality prompt token counts, when the provider reports them.
 *
 * @since 0.1.0
 */
export interface ModalityTokens {
  readonly text_tokens?: number
  readonly image_tokens?: number
  readonly audio_tokens?: number
  readonly video_tokens?: number
  readonly file_tokens?: number
}

/**
 * A validated answer: one embedding per input, in input order, all of one width.
 *
 * **Details**
 *
 * `promptTokens` and `totalTokens` are the provider's counts; when a provider reports none (Gemini
 * text models, Together), the adapter estimates them with the same word-and-punctuation count
 * the local model uses, so billing never sees zero for real work.
 *
 * @since 0.1.0
 */
export interface EmbeddingResult {
  readonly embeddings: ReadonlyArray<Embedding>
  readonly promptTokens: number
  readonly totalTokens: number
  readonly modalityTokens?: ModalityTokens
  readonly upstreamId?: string
  /**
   * Set when the upstream reported no count and had no route to count with: the token counts are
   * the gateway's estimate from the input, never 0 for non-empty input.
   */
  readonly tokensEstimated?: boolean
}

/**
 * The embedding capability of one wire format.
 *
 * **When to use**
 *
 * Resolve the adapter for a provider's `adapter` field, build its {@link Connection}, and call
 * `embed` once per attempt; retries and fallback belong to the caller.
 *
 * @since 0.1.0
 */
export class EmbeddingProvider extends Context.Service<EmbeddingProvider, {
  readonly embed: (
    connection: Connection,
    request: UpstreamRequest
  ) => Effect.Effect<EmbeddingResult, UpstreamError>
}>()("@switchyard/core/providers/EmbeddingProvider") {}

/**
 * How many vectors the input asks for.
 *
 * @since 0.1.0
 */
export const inputCount = (input: EmbeddingInput): number => {
  switch (input._tag) {
    case "Texts":
      return input.texts.length
    case "Tokens":
      return input.tokens.length
    case "Multimodal":
      return input.items.length
  }
}
