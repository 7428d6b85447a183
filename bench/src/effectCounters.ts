// Loaded into the gateway with `node --import` by `pnpm bench --stages`; nothing in the server
// changes. It counts what the Effect runtime does, by wrapping two methods of the fiber class the
// server's `effect` package defines (the same module instance: imported from the same file):
//   - run-loop steps: after each `FiberImpl.runLoop`, the fiber's `currentOpCount` (the loop
//     resets it on entry and counts every step, inline continuations included);
//   - fibers: the first `setContext` of a fiber (its constructor's); context changes: every later
//     `setContext` (a service provided, a span or a log annotation set for a region);
//   - spans: reads of the fiber cache's `tracerEnabled`, which only `makeSpanUnsafe` reads, once per
//     span made (a no-op span when tracing is off included);
//   - JS heap allocated: the heap in use at the end less at the start, plus what each garbage
//     collection in between freed (`v8.GCProfiler`).
// Each SIGUSR2 toggles a window: the first installs the counting and starts the window, the
// second removes the counting and writes the counts in the window to the file named by
// BENCH_EFFECT_COUNTERS (JSON). Outside a window the server runs Effect's own methods.
import * as Fs from "node:fs"
import { createRequire } from "node:module"
import * as NodePath from "node:path"
import * as NodeUrl from "node:url"
import * as V8 from "node:v8"

interface Counts {
  runLoopSteps: number
  runLoops: number
  contextChanges: number
  fibers: number
  spans: number
}

const out = process.env.BENCH_EFFECT_COUNTERS
const from = process.env.BENCH_EFFECT_FROM ?? NodePath.join(import.meta.dirname, "..", "..", "apps", "server", "src", "main.ts")
const entry = createRequire(from).resolve("effect")
const internal = await import(NodeUrl.pathToFileURL(NodePath.join(NodePath.dirname(entry), "internal", "effect.js")).href)
const proto = internal.FiberImpl.prototype

const counts: Counts = { runLoopSteps: 0, runLoops: 0, contextChanges: 0, fibers: 0, spans: 0 }

const runLoop = proto.runLoop
const countingRunLoop = function(this: { currentOpCount: number }, effect: unknown) {
  try {
    return runLoop.call(this, effect)
  } finally {
    counts.runLoops++
    counts.runLoopSteps += this.currentOpCount
  }
}

const watched = new Map<Record<string, unknown>, unknown>()
const setContext = proto.setContext
const countingSetContext = function(this: { context: unknown; cache: Record<string, unknown> }, context: unknown) {
  if (this.context === undefined) counts.fibers++
  else counts.contextChanges++
  setContext.call(this, context)
  const cache = this.cache
  if (cache !== undefined && !watched.has(cache)) {
    const enabled = cache.tracerEnabled
    watched.set(cache, enabled)
    Object.defineProperty(cache, "tracerEnabled", {
      configurable: true,
      enumerable: true,
      get() {
        counts.spans++
        return enabled
      }
    })
  }
}

// The counting methods are in place only inside a window, so that the rest of the run (a CPU
// profile taken before it) measures the runtime as the server runs it.
const install = () => {
  proto.runLoop = countingRunLoop
  proto.setContext = countingSetContext
}

const uninstall = () => {
  proto.runLoop = runLoop
  proto.setContext = setContext
  for (const [cache, enabled] of watched) {
    Object.defineProperty(cache, "tracerEnabled", { configurable: true, enumerable: true, writable: true, value: enabled })
  }
  watched.clear()
}

let window: { readonly used: number; readonly profiler: V8.GCProfiler } | undefined

process.on("SIGUSR2", () => {
  if (out === undefined) return
  if (window === undefined) {
    for (const key of Object.keys(counts) as Array<keyof Counts>) counts[key] = 0
    const profiler = new V8.GCProfiler()
    profiler.start()
    window = { used: V8.getHeapStatistics().used_heap_size, profiler }
    install()
    Fs.writeFileSync(out, JSON.stringify({ phase: "started" }))
    return
  }
  uninstall()
  const { profiler, used } = window
  window = undefined
  const gcs = profiler.stop()?.statistics ?? []
  let freed = 0
  for (const gc of gcs) freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize
  Fs.writeFileSync(out, JSON.stringify({ phase: "ended", ...counts, heapAllocatedBytes: V8.getHeapStatistics().used_heap_size - used + freed, gcs: gcs.length }))
})
