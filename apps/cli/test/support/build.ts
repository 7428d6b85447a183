import { build } from "rolldown"
import { options } from "../../rolldown.config.ts"

export default async function setup() {
  await build({ ...options, logLevel: "warn" })
}
