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
 * A depth check fed chunk by chunk, as a body arrives: `push` returns the index (counted from the
 * first byte of the first chunk) of the first byte at which the text nests deeper than `limit`
 * (arrays and objects, outside strings), or `-1` while it has not. Malformed JSON is left to the
 * parser: only the depth is checked, in one pass with no allocation.
 */
export const scanner = (limit: number = maxDepth) => {
  let depth = 0
  let inString = false
  let escaped = false
  let offset = 0
  return {
    push: (bytes: Uint8Array): number => {
      for (let i = 0; i < bytes.length; i++) {
        const byte = bytes[i]!
        if (inString) {
          if (escaped) escaped = false
          else if (byte === backslash) escaped = true
          else if (byte === quote) inString = false
        } else if (byte === quote) {
          inString = true
        } else if (byte === openSquare || byte === openCurly) {
          if (++depth > limit) return offset + i
        } else if (byte === closeSquare || byte === closeCurly) {
          depth--
        }
      }
      offset += bytes.length
      return -1
    }
  }
}

/** The index of the first byte at which `bytes` nests deeper than `limit`, or `-1`. */
export const firstTooDeep = (bytes: Uint8Array, limit: number = maxDepth): number => scanner(limit).push(bytes)
