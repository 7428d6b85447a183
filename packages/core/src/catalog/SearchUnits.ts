/**
 * Search units, the unit Cohere bills rerank in: one query over up to 100 documents, where a
 * document longer than 500 tokens (the query's included) counts once per 500-token chunk.
 *
 * **When to use**
 *
 * To bound a rerank call's cost before it is sent (with an upper bound of the tokens), and to
 * estimate what a provider that reported no usage would have billed.
 *
 * @since 0.4.0
 */

/**
 * Documents one search unit covers.
 *
 * @since 0.4.0
 */
const documentsPerUnit = 100

/**
 * Tokens of one chunk (query plus document part).
 *
 * @since 0.4.0
 */
const tokensPerChunk = 500

/**
 * The search units of one call: the query's tokens, and each document's.
 *
 * @since 0.4.0
 */
export const ofCall = (queryTokens: number, documentTokens: ReadonlyArray<number>): number => {
  let chunks = 0
  for (const tokens of documentTokens) chunks += Math.max(1, Math.ceil((queryTokens + tokens) / tokensPerChunk))
  return Math.ceil(chunks / documentsPerUnit)
}

/**
 * The tokens a call is billed for by providers that price rerank per token: the query once per
 * document, plus every document.
 *
 * @since 0.4.0
 */
export const tokensOfCall = (queryTokens: number, documentTokens: ReadonlyArray<number>): number =>
  documentTokens.reduce((sum, tokens) => sum + queryTokens + tokens, 0)
