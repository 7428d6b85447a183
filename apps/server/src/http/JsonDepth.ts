/**
 * How deep a JSON text nests, read from its bytes before it becomes objects: a body nested
 * thousands deep costs hundreds of megabytes and most of a second to parse and decode, and no
 * request of the API nests deeper than a few levels.
 */

/** The deepest nesting of arrays and objects a request body may have. */
export const maxDepth = 64

const quote = 0x22
const backslash = 0x5c
const openSquare = 0x5b
const closeSquare = 0x5d
const openCurly = 0x7b
const closeCurly = 0x7d

/**
 * The index of the first byte at which `bytes` nests deeper than `limit` (arrays and objects,
 * outside strings), or `-1` when it never does. Malformed JSON is left to the parser: only the
 * depth is checked, in one pass with no allocation.
 */
export const firstTooDeep = (bytes: Uint8Array, limit: number = maxDepth): number => {
  let depth = 0
  let inString = false
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i]!
    if (inString) {
      if (byte === backslash) i++
      else if (byte === quote) inString = false
    } else if (byte === quote) {
      inString = true
    } else if (byte === openSquare || byte === openCurly) {
      if (++depth > limit) return i
    } else if (byte === closeSquare || byte === closeCurly) {
      depth--
    }
  }
  return -1
}
