import * as NodeVersion from "./NodeVersion.ts"

// The entry point of `node dist/main.mjs` and `node src/main.ts`. An older Node gets one line
// naming the version it needs and this one, not a stack from deep inside a dependency: this module
// imports nothing else, and ESM evaluates every static import before the importing module's body,
// so the rest is loaded by a dynamic import once the version passed. With no arguments it is the
// gateway, loaded without the command line's parser (Gateway.ts says why).
const unsupported = NodeVersion.problem(process.versions.node)
const args = process.argv.slice(2)
if (unsupported === undefined && args.length === 0) {
  const { main } = await import("./Gateway.ts")
  main()
} else if (unsupported === undefined) {
  const { main } = await import("./ServerCommand.ts")
  main(args)
} else {
  process.stderr.write(`switchyard: cannot start: ${unsupported}\n`)
  process.exitCode = 1
}
