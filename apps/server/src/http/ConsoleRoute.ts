import { Config, Effect, FileSystem, Layer, Path } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse, HttpServerRespondable, HttpStaticServer } from "effect/http"

/**
 * The web console at `/ui/`: the static files `npx -y pnpm@10 build` (and the start command) writes to `apps/console/dist`,
 * served by the gateway itself. Paths without a file extension fall back to `index.html` (the
 * console routes in the browser); a missing asset is a 404. Before the console is built, every
 * `/ui/` path answers 404 with a message saying so.
 */
const prefix = "/ui"

export const ConsoleDirConfig = (fallback: string) =>
  Config.String("SWITCHYARD_CONSOLE_DIR").pipe(Config.withDefault(fallback))

// The page holds a key: no framing, no third-party origin, no referrer.
const securityHeaders = {
  "content-security-policy":
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer"
}

// Vite names every asset after its content hash, so assets never change; index.html does.
const cacheControlFor = (path: string) =>
  path.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache"

const notBuilt = (dir: string) =>
  HttpServerResponse.jsonUnsafe({
    error: {
      code: 404,
      message: `The web console is not built: run \`npx -y pnpm@10 build\` (it writes ${dir}), or set SWITCHYARD_CONSOLE_DIR to a built console`
    }
  }, { status: 404 })

/** Whether `dir` holds a built console (its `index.html`). */
export const isBuilt = (dir: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const path = yield* Path.Path
    return yield* fs.exists(path.join(path.resolve(dir), "index.html")).pipe(Effect.orElseSucceed(() => false))
  })

export const layer = (dir: string) =>
  Layer.unwrap(Effect.gen(function*() {
    const root = (yield* Path.Path).resolve(dir)
    const built = Effect.provide(isBuilt(root), yield* Effect.context<FileSystem.FileSystem | Path.Path>())
    const files = (yield* HttpStaticServer.make({ root, spa: true, index: "index.html" })).pipe(
      Effect.catch(HttpServerRespondable.toResponse)
    )
    const serve = Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const url = request.url.slice(prefix.length)
      if (url === "" || url.startsWith("?")) return HttpServerResponse.redirect(`${prefix}/${url}`, { status: 301 })
      if (!(yield* built)) return notBuilt(root)
      const response = yield* Effect.provideService(files, HttpServerRequest.HttpServerRequest, request.modify({ url }))
      return HttpServerResponse.setHeaders(response, { ...securityHeaders, "cache-control": cacheControlFor(url) })
    })
    // The pattern `/ui/*` also matches `/ui`, which is redirected to `/ui/` above.
    return HttpRouter.add("GET", `${prefix}/*`, serve)
  }))
