import { type BuildOptions, defineConfig } from "rolldown"

const source = (path: string) => new URL(path, import.meta.url).pathname

const inBundle = /^(effect|@effect\/)/u

/**
 * The production bundle: the server's and core's TypeScript as plain JavaScript in `dist/`, run
 * by `node dist/main.mjs`, with Effect (`effect`, `@effect/*`) inside it and its doc comments left
 * out: the process then holds the code it uses instead of every Effect module's source, about 16 MB
 * less heap at idle. The other npm dependencies stay imports (undici and ws are CommonJS packages
 * that do not survive bundling, so they are dependencies of this package). The intern program is a second entry, started as its
 * own process. Non-ASCII characters are written as escapes (`charset: "ascii"`): V8 keeps a
 * module's source text for its life, one byte per character when the text is all ASCII and two
 * otherwise (about 4 MB less resident at idle).
 */
const options = {
  input: {
    main: source("src/main.ts"),
    "runtime/InternProcess": source("src/interns/runtime/InternProcess.ts")
  },
  platform: "node",
  external: (id: string) => !id.startsWith(".") && !id.startsWith("/") && !id.startsWith("@switchyard/") && !inBundle.test(id),
  output: {
    dir: source("dist"),
    // Chunk names carry a content hash: the chunks of earlier builds go.
    cleanDir: true,
    format: "esm",
    // `dist/main.mjs` is also the package's `switchyard-server` command.
    banner: (chunk) => (chunk.name === "main" ? "#!/usr/bin/env node" : ""),
    entryFileNames: "[name].mjs",
    chunkFileNames: "[name]-[hash].mjs",
    sourcemap: true,
    comments: { jsdoc: false, legal: false, annotation: false },
    charset: "ascii"
  }
} satisfies BuildOptions

export default defineConfig(options)
