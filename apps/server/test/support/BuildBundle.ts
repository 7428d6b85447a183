import { build } from "rolldown"
import { options } from "../../rolldown.config.ts"

/** Vitest global setup: the production bundle (`dist/main.mjs`) the production tests run. */
export default async function setup() {
  await build({ ...options, logLevel: "warn" })
}
