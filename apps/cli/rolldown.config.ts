import { type BuildOptions, defineConfig } from "rolldown"

export const options = {
  input: new URL("src/bin.ts", import.meta.url).pathname,
  platform: "node",
  output: { file: new URL("dist/switchyard.mjs", import.meta.url).pathname, format: "esm" }
} satisfies BuildOptions

export default defineConfig(options)
