import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    sequence: { concurrent: false },
    // Every file's temporary files and stores in a scratch directory removed with it; the run
    // fails if anything is left at its end (vitest.scratch.ts).
    globalSetup: [new URL("./vitest.scratch.ts", import.meta.url).pathname],
    setupFiles: [new URL("./vitest.scratch-file.ts", import.meta.url).pathname],
    // The JSON report feeds the per-package summary that `pnpm test` prints at the end (scripts/TestSummary.mjs).
    reporters: ["default", "json"],
    outputFile: { json: "node_modules/.vitest/results.json" }
  }
})
