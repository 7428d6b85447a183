import type { EmbeddingProvider } from "@switchyard/core"

/** The in-process model's tokens: runs of letters and digits, and each other visible character. */
export const tokenPattern = /[\p{L}\p{N}]+|[^\s\p{L}\p{N}]/gu

export const tokenize = (text: string): ReadonlyArray<string> => text.match(tokenPattern) ?? []

export const ofText = (text: string): number => tokenize(text).length

// Media parts count nothing here: images and audio are priced per item, not per token.
export const ofInput = (input: EmbeddingProvider.EmbeddingInput): number => {
  switch (input._tag) {
    case "Texts":
      return input.texts.reduce((sum, text) => sum + ofText(text), 0)
    case "Tokens":
      return input.tokens.reduce((sum, tokens) => sum + tokens.length, 0)
    case "Multimodal":
      return input.items.reduce(
        (sum, parts) => sum + parts.reduce((n, part) => n + (part.type === "text" ? ofText(part.text) : 0), 0),
        0
      )
  }
}
