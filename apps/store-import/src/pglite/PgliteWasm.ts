import * as V8 from "node:v8"

/**
 * PGlite's Postgres is a 9 MB WebAssembly module. By default V8 first runs it as baseline
 * (Liftoff) code and then recompiles the hot functions with its optimising compiler (TurboFan) in
 * background threads; Postgres's largest functions (the expression interpreter, the SQL parser)
 * make that recompilation peak at hundreds of MB of compiler memory, much of which the allocator
 * keeps. Measured on Node 24: a bare PGlite process running 12,000 short statements peaked at
 * 731 MB with tier-up and 223 MB on baseline code; the gateway under the small c=16 benchmark
 * peaked at about 490-515 MB against 410-425 MB, and its high-water mark after starting on an
 * existing database was ~790 MB against ~250 MB, but it spent about 1.2-1.3 ms of CPU per request
 * against 1.8-1.9 ms. Tier-up stays the default; an operator short of memory can opt out
 * (`SWITCHYARD_PGLITE_BASELINE_CODE`).
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
