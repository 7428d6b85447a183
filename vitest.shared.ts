import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    sequence: { concurrent: false },
    // The JSON report feeds the per-package summary that `pnpm test` prints at the end (scripts/TestSummary.mjs).
    reporters: ["default", "json"],
    outputFile: { json: "node_modules/.vitest/results.json" }
  }
})
