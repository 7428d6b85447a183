/**
 * The 32-bit FNV-1a hash of a string's UTF-16 code units, as an unsigned integer. The local model
 * hashes its features with it; the test fakes seed their deterministic vectors with it.
 */
export const fnv1a = (text: string): number => {
  let hash = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i)
    hash = Math.imul(hash, 0x01000193)
  }
  return hash >>> 0
}
