import { Config, Context, Data, Effect, Layer, Option, Redacted } from "effect"
import * as Crypto from "node:crypto"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { StoreConfig } from "../database/Database.ts"

class SecretKeyInvalid extends Data.TaggedError("SecretKeyInvalid")<{ readonly message: string }> {}

/**
 * AES-256-GCM for secrets kept in the store (BYOK credentials). A sealed value is
 * `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url), bound to its row by the additional data, so a
 * ciphertext copied into another row does not open.
 */
export interface Cipher {
  /** Identifies the key (not secret): sealed values name the key that can open them. */
  readonly keyId: string
  readonly seal: (plaintext: Redacted.Redacted<string>, aad: string) => string
  readonly open: (sealed: string, aad: string) => Option.Option<Redacted.Redacted<string>>
}

export const fromKey = (key: Buffer): Cipher => {
  if (key.length !== 32) throw new RangeError("an AES-256 key is 32 bytes")
  const keyId = Crypto.createHash("sha256").update("switchyard/credential-key/").update(key).digest("hex").slice(0, 16)
  return {
    keyId,
    seal: (plaintext, aad) => {
      const iv = Crypto.randomBytes(12)
      const cipher = Crypto.createCipheriv("aes-256-gcm", key, iv)
      cipher.setAAD(Buffer.from(aad, "utf8"))
      const body = Buffer.concat([cipher.update(Redacted.value(plaintext), "utf8"), cipher.final()])
      return ["v1", keyId, iv.toString("base64url"), cipher.getAuthTag().toString("base64url"), body.toString("base64url")].join(".")
    },
    open: (sealed, aad) => {
      const [version, id, iv, tag, body] = sealed.split(".")
      if (version !== "v1" || id !== keyId || iv === undefined || tag === undefined || body === undefined) return Option.none()
      try {
        const decipher = Crypto.createDecipheriv("aes-256-gcm", key, Buffer.from(iv, "base64url"))
        decipher.setAAD(Buffer.from(aad, "utf8"))
        decipher.setAuthTag(Buffer.from(tag, "base64url"))
        const plain = Buffer.concat([decipher.update(Buffer.from(body, "base64url")), decipher.final()]).toString("utf8")
        return Option.some(Redacted.make(plain))
      } catch {
        return Option.none()
      }
    }
  }
}

export const parseKey = (text: string): Buffer | undefined => {
  const trimmed = text.trim()
  if (/^[0-9a-fA-F]{64}$/u.test(trimmed)) return Buffer.from(trimmed, "hex")
  if (/^[A-Za-z0-9+/_-]{42,44}={0,2}$/u.test(trimmed)) {
    const bytes = Buffer.from(trimmed, "base64")
    if (bytes.length === 32) return bytes
  }
  return undefined
}

const keyFile = (dataDir: string) =>
  Effect.try({
    try: () => {
      const path = NodePath.join(dataDir, "secret.key")
      if (!Fs.existsSync(path)) {
        Fs.mkdirSync(dataDir, { recursive: true })
        const temporary = `${path}.${process.pid}.${Crypto.randomBytes(6).toString("hex")}`
        Fs.writeFileSync(temporary, `${Crypto.randomBytes(32).toString("base64")}\n`, { mode: 0o600, flag: "wx" })
        try {
          Fs.linkSync(temporary, path)
        } catch (error) {
          if ((error as { code?: string }).code !== "EEXIST") throw error
        } finally {
          Fs.unlinkSync(temporary)
        }
      }
      const key = parseKey(Fs.readFileSync(path, "utf8"))
      if (key === undefined) throw new Error(`${path} does not hold a 32-byte key in base64 or hex`)
      return key
    },
    catch: (error) => new SecretKeyInvalid({ message: `Cannot use the secret key file: ${error instanceof Error ? error.message : String(error)}` })
  })

/**
 * The key from `SWITCHYARD_SECRET_KEY` (32 bytes as 64 hex digits or base64). On PostgreSQL
 * (`DATABASE_URL`) it is required: replicas share the store and must all open what any of them
 * sealed, and a key generated per data directory would differ between them. On the embedded store (one
 * process per data directory) it defaults to `<data dir>/secret.key`, created once with mode 0600.
 */
const load = Effect.gen(function*() {
  const configured = yield* Config.option(Config.Redacted("SWITCHYARD_SECRET_KEY"))
  if (Option.isSome(configured) && Redacted.value(configured.value).length > 0) {
    const key = parseKey(Redacted.value(configured.value))
    if (key === undefined) {
      return yield* new SecretKeyInvalid({ message: "SWITCHYARD_SECRET_KEY must be 32 bytes, written as 64 hex digits or in base64" })
    }
    return fromKey(key)
  }
  const store = yield* StoreConfig
  if (store.kind === "postgres") {
    return yield* new SecretKeyInvalid({
      message: "SWITCHYARD_SECRET_KEY is required with DATABASE_URL: every replica must encrypt stored provider credentials " +
        "with the same key (32 bytes as 64 hex digits or base64, e.g. the output of `openssl rand -base64 32`)"
    })
  }
  return fromKey(yield* keyFile(store.dataDir))
})

export class CredentialCipher extends Context.Service<CredentialCipher, Cipher>()("@switchyard/server/store/CredentialCipher") {
  static readonly layer = Layer.effect(CredentialCipher, load)
}
