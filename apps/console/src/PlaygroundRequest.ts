import type { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import type { RerankRequest } from "@switchyard/core/schema/RerankRequest"
import type { Quantization, SortBy } from "@switchyard/core/schema/ProviderPreferences"

/**
 * The route playground's form, as the person filled it in (text fields as typed).
 */
export interface PlaygroundForm {
  /** Which call the form writes: an embeddings request or a rerank of `inputs` against `query`. */
  readonly task: "embeddings" | "rerank"
  readonly model: string
  readonly query: string
  readonly inputs: string
  readonly dimensions: string
  readonly order: string
  readonly only: string
  readonly ignore: string
  readonly quantizations: string
  readonly sort: SortBy | "none"
  readonly maxPromptPrice: string
  readonly allowFallbacks: boolean
  readonly zdr: boolean
  readonly denyDataCollection: boolean
}

export const emptyForm: PlaygroundForm = {
  task: "embeddings",
  model: "",
  query: "Which animal is quick?",
  inputs: "The quick brown fox jumps over the lazy dog",
  dimensions: "",
  order: "",
  only: "",
  ignore: "",
  quantizations: "",
  sort: "none",
  maxPromptPrice: "",
  allowFallbacks: true,
  zdr: false,
  denyDataCollection: false
}

const list = (text: string): ReadonlyArray<string> =>
  text.split(/[,\s]+/u).map((item) => item.trim()).filter((item) => item.length > 0)

const linesOf = (text: string) => text.split("\n").filter((line) => line.trim().length > 0)

/**
 * The embeddings request the form describes: one input per non-empty line (a single line is sent
 * as a string), and only the preferences that differ from the gateway's defaults.
 */
export const toRequest = (form: PlaygroundForm): EmbeddingRequest => {
  const lines = linesOf(form.inputs)
  const provider = preferencesOf(form)
  return {
    model: form.model.trim(),
    input: lines.length === 1 ? lines[0]! : lines,
    ...(form.dimensions.trim() !== "" ? { dimensions: Number(form.dimensions) } : {}),
    ...(Object.keys(provider).length > 0 ? { provider } : {})
  } as EmbeddingRequest
}

/**
 * The rerank request the form describes: the query, one document per non-empty line, and the
 * same preferences.
 */
export const toRerankRequest = (form: PlaygroundForm): RerankRequest => {
  const provider = preferencesOf(form)
  return {
    model: form.model.trim(),
    query: form.query,
    documents: linesOf(form.inputs),
    return_documents: true,
    ...(Object.keys(provider).length > 0 ? { provider } : {})
  } as RerankRequest
}

const preferencesOf = (form: PlaygroundForm) => {
  const order = list(form.order)
  const only = list(form.only)
  const ignore = list(form.ignore)
  const quantizations = list(form.quantizations) as ReadonlyArray<Quantization>
  const provider = {
    ...(order.length > 0 ? { order } : {}),
    ...(only.length > 0 ? { only } : {}),
    ...(ignore.length > 0 ? { ignore } : {}),
    ...(quantizations.length > 0 ? { quantizations } : {}),
    ...(form.sort !== "none" ? { sort: form.sort } : {}),
    ...(form.maxPromptPrice.trim() !== "" ? { max_price: { prompt: form.maxPromptPrice.trim() } } : {}),
    ...(form.allowFallbacks ? {} : { allow_fallbacks: false }),
    ...(form.zdr ? { zdr: true } : {}),
    ...(form.denyDataCollection ? { data_collection: "deny" as const } : {})
  }
  return provider
}
