import { defineConfig } from "vitest/config"

// `pnpm test:e2e`: headless Chromium against a gateway with real traffic; never part of `pnpm test`.
export default defineConfig({
  test: {
    include: ["e2e/**/*.e2e.ts"],
    testTimeout: 60_000,
    hookTimeout: 480_000,
    fileParallelism: false,
    sequence: { concurrent: false }
  }
})
