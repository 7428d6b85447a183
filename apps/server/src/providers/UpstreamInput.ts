import type { EmbeddingProvider } from "@switchyard/core"
import type { EmbeddingRequest, InputModality } from "@switchyard/core/schema/EmbeddingRequest"

/**
 * The request's `input`, in whichever of its five forms, as the adapters take it.
 */
export const normalize = (input: EmbeddingRequest["input"]): EmbeddingProvider.EmbeddingInput => {
  if (typeof input === "string") return { _tag: "Texts", texts: [input] }
  const first = input[0]
  if (typeof first === "string") return { _tag: "Texts", texts: input as ReadonlyArray<string> }
  if (typeof first === "number") return { _tag: "Tokens", tokens: [input as ReadonlyArray<number>] }
  if (Array.isArray(first)) return { _tag: "Tokens", tokens: input as ReadonlyArray<ReadonlyArray<number>> }
  return {
    _tag: "Multimodal",
    items: (input as ReadonlyArray<{ readonly content: ReadonlyArray<EmbeddingProvider.ContentPart> }>).map((i) => i.content)
  }
}

const media: ReadonlyArray<InputModality> = ["image", "audio", "video", "file"]

/**
 * The input as one endpoint takes it: multimodal inputs made only of text parts go to an
 * endpoint that declares no media modality as plain strings, one per input object, the parts of
 * one object joined with a newline. Anything else is sent as it is (routing already left out
 * endpoints that do not declare a modality the input carries).
 */
export const forEndpoint = (
  input: EmbeddingProvider.EmbeddingInput,
  accepted: ReadonlyArray<InputModality>
): EmbeddingProvider.EmbeddingInput => {
  if (input._tag !== "Multimodal" || accepted.some((m) => media.includes(m))) return input
  const texts: Array<string> = []
  for (const parts of input.items) {
    const item: Array<string> = []
    for (const part of parts) {
      if (part.type !== "text") return input
      item.push(part.text)
    }
    texts.push(item.join("\n"))
  }
  return { _tag: "Texts", texts }
}

export const count = (input: EmbeddingProvider.EmbeddingInput): number =>
  input._tag === "Texts" ? input.texts.length : input._tag === "Tokens" ? input.tokens.length : input.items.length

/**
 * The items at `indices`, in that order, as an input of the same form.
 */
export const pick = (input: EmbeddingProvider.EmbeddingInput, indices: ReadonlyArray<number>): EmbeddingProvider.EmbeddingInput =>
  input._tag === "Texts"
    ? { _tag: "Texts", texts: indices.map((i) => input.texts[i]!) }
    : input._tag === "Tokens"
    ? { _tag: "Tokens", tokens: indices.map((i) => input.tokens[i]!) }
    : { _tag: "Multimodal", items: indices.map((i) => input.items[i]!) }

/**
 * Each item as one string that differs whenever the items differ, in input order: what the
 * embeddings cache hashes.
 */
export const itemTexts = (input: EmbeddingProvider.EmbeddingInput): Array<string> =>
  input._tag === "Texts"
    ? input.texts.map((text) => `t:${text}`)
    : input._tag === "Tokens"
    ? input.tokens.map((ids) => `k:${ids.join(",")}`)
    : input.items.map((parts) => `m:${JSON.stringify(parts)}`)

/**
 * Splits an input into batches of at most `size` items, keeping their order.
 */
export const batches = (input: EmbeddingProvider.EmbeddingInput, size: number): Array<EmbeddingProvider.EmbeddingInput> => {
  const n = count(input)
  if (n <= size) return [input]
  const out: Array<EmbeddingProvider.EmbeddingInput> = []
  for (let start = 0; start < n; start += size) {
    out.push(
      input._tag === "Texts"
        ? { _tag: "Texts", texts: input.texts.slice(start, start + size) }
        : input._tag === "Tokens"
        ? { _tag: "Tokens", tokens: input.tokens.slice(start, start + size) }
        : { _tag: "Multimodal", items: input.items.slice(start, start + size) }
    )
  }
  return out
}

/**
 * An upper bound of the tokens an input can be billed for, before any provider counted them:
 * a token covers at least one UTF-8 byte of text; token ids count exactly; media parts are priced
 * per item, and count separately.
 */
export const tokenBound = (input: EmbeddingProvider.EmbeddingInput): { readonly tokens: number; readonly images: number } => {
  if (input._tag === "Texts") return { tokens: input.texts.reduce((n, t) => n + Buffer.byteLength(t, "utf8"), 0), images: 0 }
  if (input._tag === "Tokens") return { tokens: input.tokens.reduce((n, t) => n + t.length, 0), images: 0 }
  let tokens = 0
  let images = 0
  for (const item of input.items) {
    for (const part of item) {
      if (part.type === "text") tokens += Buffer.byteLength(part.text, "utf8")
      else if (part.type === "image_url") images += 1
      else tokens += Math.ceil(Buffer.byteLength(mediaData(part), "utf8") / 3)
    }
  }
  return { tokens, images }
}

const mediaData = (part: EmbeddingProvider.ContentPart): string =>
  part.type === "input_audio" ? part.input_audio.data : part.type === "input_video" ? part.input_video.data : part.type === "input_file" ? part.input_file.data : ""

export const imageCount = (input: EmbeddingProvider.EmbeddingInput): number =>
  input._tag === "Multimodal"
    ? input.items.reduce((n, item) => n + item.filter((part) => part.type === "image_url").length, 0)
    : 0
