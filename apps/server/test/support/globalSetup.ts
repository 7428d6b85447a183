import * as Crypto from "node:crypto"

/**
 * What every test process shares: one secret key for the run. It is required with DATABASE_URL
 * (replicas share it); the test servers and processes inherit it.
 */
export default function setup() {
  process.env.SWITCHYARD_SECRET_KEY ??= Crypto.randomBytes(32).toString("base64")
}
