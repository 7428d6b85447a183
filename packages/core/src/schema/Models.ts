/**
 * The public model listing's extras: the `output_modalities` filter, the count, and one model
 * as `GET /models/{id}` answers it.
 *
 * @since 0.4.0
 */
import { Schema } from "effect"
import { EmbeddingModel, ListModelsQuery } from "./EmbeddingResponse.ts"

/**
 * `output_modalities`, as OpenRouter's SDK sends it: a comma-separated list of what the models
 * produce (`embeddings`, `rerank`), or `all`; absent: `embeddings`, what `GET /models` has always
 * listed. A modality no model here produces (`text`, `image`) matches none.
 *
 * @since 0.4.0
 */
const OutputModalities = Schema.String.check(Schema.isPattern(/^[a-z_]+(,[a-z_]+)*$/u)).annotate({
  description: "Comma-separated output modalities (embeddings, rerank) or all; default embeddings"
})

/**
 * The query of `GET /models/count`.
 *
 * @since 0.4.0
 */
export const CountModelsQuery = {
  output_modalities: Schema.optionalKey(OutputModalities)
}

/**
 * The query of `GET /models` and `GET /models/user`: a page and the modality filter.
 *
 * @since 0.4.0
 */
export const ModelsQuery = {
  ...ListModelsQuery,
  ...CountModelsQuery
}

/**
 * The `GET /models/count` body, OpenRouter's shape.
 *
 * @since 0.4.0
 */
export const ModelCount = Schema.Struct({
  data: Schema.Struct({ count: Schema.Int.check(Schema.isGreaterThanOrEqualTo(0)) })
}).annotate({ identifier: "ModelCount" })

/**
 * One model as `GET /models/{id}` answers it: the listing's record, plus the fields of OpenAI's
 * model object (`object: "model"`, `owned_by`: the model's vendor) that `openai.models.retrieve`
 * reads.
 *
 * @since 0.4.0
 */
export const ModelObject = Schema.Struct({
  ...EmbeddingModel.fields,
  object: Schema.Literal("model"),
  owned_by: Schema.String
}).annotate({ identifier: "ModelObject" })

/**
 * @since 0.4.0
 */
export type ModelObject = typeof ModelObject.Type

/**
 * The `GET /model/{author}/{slug}` body (`@openrouter/sdk`'s `models.get`): the model under
 * `data`.
 *
 * @since 0.4.0
 */
export const ModelEnvelope = Schema.Struct({ data: ModelObject }).annotate({ identifier: "ModelEnvelope" })

/**
 * The model of `GET /models/{id}`: its id in one path segment (`openai%2Ftext-embedding-3-small`,
 * as the `openai` SDK encodes it).
 *
 * @since 0.4.0
 */
export const ModelIdParams = {
  id: Schema.String.check(Schema.isMinLength(1))
}

/**
 * The model of `GET /models/{author}/{slug}` and `GET /model/{author}/{slug}`: its id written
 * unencoded.
 *
 * @since 0.4.0
 */
export const ModelPathParams = {
  author: Schema.String.check(Schema.isMinLength(1)),
  slug: Schema.String.check(Schema.isMinLength(1))
}
