import type { EmbeddingProvider } from "@switchyard/core"
import * as LongInputSupport from "@switchyard/core/catalog/LongInputs"
import type * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import * as Windows from "@switchyard/core/vectors/Windows"
import { Effect } from "effect"
import * as Tokenizers from "../providers/Tokenizers.ts"

/**
 * The sent items one input item became: `[from, to)` of what the endpoint is sent, each weighed
 * by its tokens (one item, weight 1, when it was not split).
 */
export interface Split {
  readonly from: number
  readonly to: number
  readonly weights: ReadonlyArray<number>
}

/**
 * An input made ready for one endpoint's limit: what is sent, and, when `truncate: "chunk"` split
 * an item, where each item's windows are.
 */
export interface Ready {
  readonly input: EmbeddingProvider.EmbeddingInput
  readonly windows: ReadonlyArray<Split> | undefined
}

type Item<T> = { readonly count: number; readonly content: number; readonly slice: (start: number, end: number) => T }

/**
 * What the gateway does, before sending, with inputs longer than the endpoint's limit
 * (`EndpointParameters.LongInputs`): refuses the first one it counted over the limit with
 * `truncate: "none"` (no upstream call), cuts one at its start or end, or splits one into windows
 * within the limit. Only the texts that could be over the limit by a bound
 * (`Tokenizers.bound`) are tokenized; token ids count exactly. Multimodal items go as they are.
 */
export const prepare = <E>(
  long: EndpointParameters.LongInputs,
  model: string,
  input: EmbeddingProvider.EmbeddingInput,
  serverTokenize: Tokenizers.ServerTokenize<E> | undefined
): Effect.Effect<Ready, UpstreamError.UpstreamError | E> => {
  const max = long.maxInputTokens
  if (long.gateway === undefined || max === undefined || input._tag === "Multimodal") return Effect.succeed({ input, windows: undefined })
  // The byte bound keeps a margin for the model's special tokens; an exact count needs none.
  const limit = long.counter === "bytes" ? Math.max(1, max - LongInputSupport.byteMargin) : max
  if (input._tag === "Tokens") {
    const items = input.tokens.map((ids): Item<ReadonlyArray<number>> => ({ count: ids.length, content: ids.length, slice: (a, b) => ids.slice(a, b) }))
    return Effect.map(
      shape(long.gateway, model, max, limit, items.map((item) => (item.count > limit ? item : undefined)), input.tokens),
      ({ values, windows }) => ({ input: { _tag: "Tokens", tokens: values }, windows })
    )
  }
  const texts = input.texts
  const over: Array<number> = []
  for (const [i, text] of texts.entries()) {
    // A UTF-16 unit is at most 3 UTF-8 bytes: most texts are cleared without measuring them.
    if (long.counter !== "local" && text.length * 3 + LongInputSupport.byteMargin <= limit) continue
    if (Tokenizers.bound(long.counter, text, LongInputSupport.byteMargin) > limit) over.push(i)
  }
  if (over.length === 0) return Effect.succeed({ input, windows: undefined })
  return Tokenizers.tokenize(long.counter, over.map((i) => texts[i]!), serverTokenize).pipe(
    Effect.flatMap((tokenized) => {
      const items = new Array<Item<string> | undefined>(texts.length)
      for (const [k, i] of over.entries()) items[i] = tokenized[k]
      return shape(long.gateway!, model, max, limit, items, texts)
    }),
    Effect.map(({ values, windows }) => ({ input: { _tag: "Texts", texts: values }, windows }))
  )
}

// Each item over the limit refused, cut or split; the others as they are.
const shape = <T>(
  gateway: NonNullable<EndpointParameters.LongInputs["gateway"]>,
  model: string,
  max: number,
  limit: number,
  items: ReadonlyArray<Item<T> | undefined>,
  originals: ReadonlyArray<T>
): Effect.Effect<{ readonly values: ReadonlyArray<T>; readonly windows: ReadonlyArray<Split> | undefined }, UpstreamError.UpstreamError> => {
  const values: Array<T> = []
  const windows: Array<Split> = []
  let split = false
  for (const [index, original] of originals.entries()) {
    const item = items[index]
    const from = values.length
    if (item === undefined || item.count <= limit) {
      values.push(original)
      windows.push({ from, to: from + 1, weights: [1] })
      continue
    }
    // What the model counts beyond the text (its special tokens) stays within each piece.
    const room = Math.max(1, limit - (item.count - item.content))
    switch (gateway) {
      case "refuse":
        return Effect.fail(UpstreamError.inputTooLong({ model, max_input_tokens: max, index, tokens: item.count }))
      case "start":
        values.push(item.slice(item.content - room, item.content))
        break
      case "end":
        values.push(item.slice(0, room))
        break
      case "chunk": {
        const parts = Windows.split(item.content, room)
        for (const part of parts) values.push(item.slice(part.start, part.end))
        windows.push({ from, to: from + parts.length, weights: parts.map((part: Windows.Window) => part.end - part.start) })
        split = true
        continue
      }
    }
    windows.push({ from, to: from + 1, weights: [1] })
  }
  return Effect.succeed({ values, windows: split ? windows : undefined })
}
