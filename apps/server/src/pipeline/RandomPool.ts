import * as Crypto from "node:crypto"

const pool = Buffer.allocUnsafe(8192)
let offset = pool.length

/**
 * `n` cryptographically random bytes (n ≤ 8192) from a pool refilled 8 KiB at a time: one call into
 * the CSPRNG per few hundred requests instead of one per id. The view is overwritten by a later
 * refill, so read it at once.
 */
const take = (n: number): Buffer => {
  if (offset + n > pool.length) {
    Crypto.randomFillSync(pool)
    offset = 0
  }
  const bytes = pool.subarray(offset, offset + n)
  offset += n
  return bytes
}

/** A random unsigned 32-bit integer. */
export const uint32 = (): number => take(4).readUInt32BE(0)

/** `n` random bytes as base64url text. */
export const base64url = (n: number): string => take(n).toString("base64url")
