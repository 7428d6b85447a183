import type * as LongInputs from "@switchyard/core/catalog/LongInputs"
import { Effect } from "effect"
import type { Tiktoken } from "js-tiktoken/lite"
import { tokenPattern } from "./TokenEstimate.ts"

/**
 * A text as its model's tokenizer sees it: `count` is what the model counts against its limit
 * (special tokens included), `content` the tokens that carry the text, and `slice` the text of
 * content tokens `[start, end)`.
 */
export interface Tokenized {
  readonly count: number
  readonly content: number
  readonly slice: (start: number, end: number) => string
}

/** One token of a server's own tokenizer: byte offsets into the text, and whether it is special. */
export interface ServerToken {
  readonly special: boolean
  readonly start: number
  readonly stop: number
}

/** A server's own tokenizer (TEI's `/tokenize`), for the texts of one call. */
export type ServerTokenize<E> = (texts: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<ReadonlyArray<ServerToken>>, E>

// OpenAI's encoding: its ranks are about 1.7 MB of JavaScript and 50 MB of heap once built,
// loaded on the first text that needs counting, never for a request whose texts are short.
let cl100k: Promise<Tiktoken> | undefined
const loadCl100k = () =>
  cl100k ??= Promise.all([import("js-tiktoken/lite"), import("js-tiktoken/ranks/cl100k_base")]).then(([lite, ranks]) =>
    new lite.Tiktoken(ranks.default)
  )

const byTiktoken = (encoding: Tiktoken, text: string): Tokenized => {
  const tokens = encoding.encode(text)
  return { count: tokens.length, content: tokens.length, slice: (start, end) => encoding.decode(tokens.slice(start, end)) }
}

// The in-process model's own tokens (`TokenEstimate.tokenPattern`), with where each stands in the text.
const byLocal = (text: string): Tokenized => {
  const spans = [...text.matchAll(tokenPattern)].map((m) => [m.index, m.index + m[0].length] as const)
  return {
    count: spans.length,
    content: spans.length,
    slice: (start, end) => (start >= end ? "" : text.slice(spans[start]![0], spans[end - 1]![1]))
  }
}

// A UTF-8 continuation byte: a cut there would split a character.
const isContinuation = (byte: number | undefined) => byte !== undefined && (byte & 0xc0) === 0x80

const charStart = (bytes: Buffer, at: number) => {
  let i = Math.min(at, bytes.length)
  while (i > 0 && isContinuation(bytes[i])) i--
  return i
}

// The byte bound: a token covers at least one byte, so bytes stand for tokens (never fewer).
const byBytes = (text: string): Tokenized => {
  const bytes = Buffer.from(text, "utf8")
  return {
    count: bytes.length,
    content: bytes.length,
    slice: (start, end) => bytes.toString("utf8", charStart(bytes, start), charStart(bytes, end))
  }
}

const byServer = (text: string, tokens: ReadonlyArray<ServerToken>): Tokenized => {
  const content = tokens.filter((t) => !t.special)
  const bytes = Buffer.from(text, "utf8")
  return {
    count: tokens.length,
    content: content.length,
    slice: (start, end) => (start >= end ? "" : bytes.toString("utf8", content[start]!.start, content[end - 1]!.stop))
  }
}

/**
 * The upper bound of a text's tokens without tokenizing it, for a counter: a token covers at
 * least one byte (OpenAI's byte-level encoding, and every server tokenizer, which may add a few
 * special tokens), at least one character of the in-process model's. A text under its limit by
 * this bound is never tokenized.
 */
export const bound = (counter: LongInputs.Counter, text: string, margin: number): number =>
  counter === "local" ? text.length : Buffer.byteLength(text, "utf8") + (counter === "server" ? margin : 0)

/**
 * The texts as a counter's tokenizer sees them (`server` asks the server, through `serverTokenize`).
 */
export const tokenize = <E>(
  counter: LongInputs.Counter,
  texts: ReadonlyArray<string>,
  serverTokenize: ServerTokenize<E> | undefined
): Effect.Effect<ReadonlyArray<Tokenized>, E> => {
  switch (counter) {
    case "cl100k_base":
      return Effect.promise(loadCl100k).pipe(Effect.map((encoding) => texts.map((text) => byTiktoken(encoding, text))))
    case "local":
      return Effect.succeed(texts.map(byLocal))
    case "bytes":
      return Effect.succeed(texts.map(byBytes))
    case "server":
      return serverTokenize === undefined
        ? Effect.succeed(texts.map(byBytes))
        : serverTokenize(texts).pipe(Effect.map((tokens) => texts.map((text, i) => byServer(text, tokens[i] ?? []))))
    default:
      return Effect.succeed(texts.map(byBytes))
  }
}
