import * as Crypto from "node:crypto"

/**
 * Key secrets are 256 random bits behind a recognisable prefix. Only their SHA-256 is stored: a
 * secret of that entropy needs no slow hash, and the digest doubles as the key's public `hash`.
 */
export const prefix = "sk-sy-v1-"

export const generate = (): string => prefix + Crypto.randomBytes(32).toString("hex")

/**
 * A key's label: enough of the secret to recognise it, never enough to use it.
 */
export const label = (secret: string): string => `${secret.slice(0, 12)}...${secret.slice(-3)}`

export const hash = (secret: string): string => Crypto.createHash("sha256").update(secret, "utf8").digest("hex")

/**
 * Compares two hex digests in constant time.
 */
export const sameHash = (a: string, b: string): boolean =>
  a.length === b.length && Crypto.timingSafeEqual(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"))

/**
 * Whether a string is shaped like a key at all; anything else is refused before a lookup.
 * `rule` says the same in words, for messages.
 */
export const isWellFormed = (secret: string): boolean => secret.length >= 16 && secret.length <= 256 && /^[\x21-\x7e]+$/u.test(secret)

export const rule = "16 to 256 printable ASCII characters without spaces"
