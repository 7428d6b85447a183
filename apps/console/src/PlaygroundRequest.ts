import type { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import type { Quantization, SortBy } from "@switchyard/core/schema/ProviderPreferences"

/**
 * The route playground's form, as the person filled it in (text fields as typed).
 */
export interface PlaygroundForm {
  readonly model: string
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
  model: "",
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

/**
 * The embeddings request the form describes: one input per non-empty line (a single line is sent
 * as a string), and only the preferences that differ from the gateway's defaults.
 */
export const toRequest = (form: PlaygroundForm): EmbeddingRequest => {
  const lines = form.inputs.split("\n").filter((line) => line.trim().length > 0)
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
  return {
    model: form.model.trim(),
    input: lines.length === 1 ? lines[0]! : lines,
    ...(form.dimensions.trim() !== "" ? { dimensions: Number(form.dimensions) } : {}),
    ...(Object.keys(provider).length > 0 ? { provider } : {})
  } as EmbeddingRequest
}
