import * as V8 from "node:v8"

/**
 * PGlite's Postgres is a 9 MB WebAssembly module. By default V8 first runs it as baseline
 * (Liftoff) code and then recompiles the hot functions with its optimising compiler (TurboFan) in
 * background threads; Postgres's largest functions (the expression interpreter, the SQL parser)
 * make that recompilation peak at 500+ MB of compiler memory, most of which the allocator keeps.
 * Measured on Node 24 (16 MB shared buffers, 12,000 short statements after opening an existing
 * database): peak RSS 731 MB with tier-up, 223 MB with baseline code only, and CPU 2.8 s against
 * 2.1 s (the statements are short; the recompilation itself costs CPU).
 *
 * V8 settles a module's tiering while PGlite compiles and instantiates it (handing PGlite a module
 * compiled with the flags off is not enough), so the flags are turned off for the opening of the
 * database and put back once it is open; WebAssembly compiled afterwards (undici's HTTP parser)
 * gets the defaults again. When the process was started with its own tiering flags they are left
 * alone.
 */

const tieringFlags = /^--(no-)?(wasm-tier-up|wasm-dynamic-tiering|liftoff|liftoff-only)\b/

/** Whether the process chose its own WebAssembly tiering on the command line. */
const tieringChosenByProcess = () => process.execArgv.some((arg) => tieringFlags.test(arg))

/**
 * Runs `open` (which compiles and starts PGlite) with V8's WebAssembly tier-up turned off, so
 * PGlite's module stays on baseline code; restores the defaults afterwards, failed or not.
 */
export const withBaselineCode = async <A>(open: () => Promise<A>): Promise<A> => {
  if (tieringChosenByProcess()) return open()
  V8.setFlagsFromString("--no-wasm-tier-up")
  V8.setFlagsFromString("--no-wasm-dynamic-tiering")
  try {
    return await open()
  } finally {
    V8.setFlagsFromString("--wasm-dynamic-tiering")
    V8.setFlagsFromString("--wasm-tier-up")
  }
}
