import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { type RunningServer, startServer, tempDir } from "../support/TestServer.ts"

const indexHtml = "<!doctype html><title>console</title><script type=module src=/ui/assets/app-1234.js></script>"

const builtConsole = () => {
  const dir = tempDir("console")
  Fs.mkdirSync(NodePath.join(dir, "assets"))
  Fs.writeFileSync(NodePath.join(dir, "index.html"), indexHtml)
  Fs.writeFileSync(NodePath.join(dir, "assets", "app-1234.js"), "console.log('hi')")
  Fs.writeFileSync(NodePath.join(dir, "assets", "app-1234.css"), "body{}")
  return dir
}

const browserAccept = "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8"

const get = (server: RunningServer, path: string, accept = browserAccept) =>
  fetch(`${server.origin}${path}`, { redirect: "manual", headers: { accept } })

describe("the web console at /ui/", () => {
  let server: RunningServer
  let empty: RunningServer
  beforeAll(async () => {
    server = await startServer({ env: { SWITCHYARD_CONSOLE_DIR: builtConsole() } })
    empty = await startServer({ env: { SWITCHYARD_CONSOLE_DIR: NodePath.join(tempDir("console-none"), "dist") } })
  })
  afterAll(async () => {
    await server?.close()
    await empty?.close()
  })

  it("serves index.html at /ui/ as HTML that is revalidated, with the page's security headers", async () => {
    const response = await get(server, "/ui/")
    assert.strictEqual(response.status, 200)
    assert.strictEqual(response.headers.get("content-type"), "text/html; charset=utf-8")
    assert.strictEqual(response.headers.get("cache-control"), "no-cache")
    assert.include(response.headers.get("content-security-policy") ?? "", "frame-ancestors 'none'")
    assert.strictEqual(response.headers.get("x-content-type-options"), "nosniff")
    assert.strictEqual(await response.text(), indexHtml)
  })

  it("redirects /ui to /ui/", async () => {
    const response = await get(server, "/ui")
    assert.strictEqual(response.status, 301)
    assert.strictEqual(response.headers.get("location"), "/ui/")
  })

  it("answers the console's own paths with index.html, so a reload on a page works", async () => {
    for (const path of ["/ui/keys", "/ui/playground", "/ui/interns?x=1"]) {
      const response = await get(server, path)
      assert.strictEqual(response.status, 200, path)
      assert.strictEqual(await response.text(), indexHtml, path)
    }
  })

  it("does not answer a script's request for an unknown path with the page", async () => {
    const response = await get(server, "/ui/keys", "application/json")
    assert.strictEqual(response.status, 404)
  })

  it("serves hashed assets with their content type, cached for good", async () => {
    const script = await get(server, "/ui/assets/app-1234.js")
    assert.strictEqual(script.status, 200)
    assert.strictEqual(script.headers.get("content-type"), "text/javascript; charset=utf-8")
    assert.strictEqual(script.headers.get("cache-control"), "public, max-age=31536000, immutable")
    assert.strictEqual(await script.text(), "console.log('hi')")
    const style = await get(server, "/ui/assets/app-1234.css")
    assert.strictEqual(style.headers.get("content-type"), "text/css; charset=utf-8")
  })

  it("answers a missing asset with 404 in the error envelope, not with index.html", async () => {
    const response = await get(server, "/ui/assets/gone-9999.js")
    assert.strictEqual(response.status, 404)
    const body = await response.json() as { error: { code: number; message: string } }
    assert.strictEqual(body.error.code, 404)
  })

  it("never serves a file outside the console's directory", async () => {
    for (const path of ["/ui/../package.json", "/ui/%2e%2e/%2e%2e/package.json", "/ui/..%2f..%2fpackage.json"]) {
      const response = await get(server, path)
      const text = await response.text()
      assert.notInclude(text, "\"name\"", path)
    }
  })

  it("says how to build the console when it is not built", async () => {
    for (const path of ["/ui/", "/ui/keys"]) {
      const response = await get(empty, path)
      assert.strictEqual(response.status, 404)
      const body = await response.json() as { error: { code: number; message: string } }
      assert.match(body.error.message, /The web console is not built: run `npx -y pnpm@10 build`/)
    }
  })

  it("leaves the API as it was", async () => {
    const response = await get(server, "/api/v1/health")
    assert.strictEqual(response.status, 200)
  })
})
