import * as NodeVersion from "./NodeVersion.ts"

// The entry point of `node dist/main.mjs` and `node src/main.ts`. An older Node gets one line
// naming the version it needs and this one, not a stack from deep inside a dependency: this module
// imports nothing else, and ESM evaluates every static import before the importing module's body,
// so the rest is loaded by a dynamic import once the version passed.
const unsupported = NodeVersion.problem(process.versions.node)
if (unsupported === undefined) {
  const { main } = await import("./ServerCommand.ts")
  main(process.argv.slice(2))
} else {
  process.stderr.write(`switchyard: cannot start: ${unsupported}\n`)
  process.exitCode = 1
}
