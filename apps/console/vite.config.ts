import { defineConfig } from "vite"

// The gateway serves the built files at /ui/ (apps/server/src/http/ConsoleRoute.ts).
export default defineConfig({
  base: "/ui/",
  oxc: { jsx: { runtime: "automatic" } },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    chunkSizeWarningLimit: 1500,
    rolldownOptions: {
      // Mantine marks its modules "use client" for React Server Components; a browser bundle has no use for it.
      onLog: (level, log, handler) => {
        if (log.code === "MODULE_LEVEL_DIRECTIVE") return
        handler(level, log)
      }
    }
  }
})
