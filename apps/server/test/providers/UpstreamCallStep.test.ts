import { assert, describe, it } from "@effect/vitest"
import * as BedrockAnswer from "@switchyard/core/upstream/BedrockAnswer"
import type * as UpstreamAnswer from "@switchyard/core/upstream/UpstreamAnswer"
import { Effect } from "effect"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "effect/http"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as UpstreamHttp from "../../src/providers/UpstreamHttp.ts"

const answering = (status: number, body: string) =>
  HttpClient.make((request) => Effect.succeed(HttpClientResponse.fromWeb(request, new Response(body, { status }))))

const request = HttpClientRequest.post("http://upstream.test/v1/embeddings")

describe("the one upstream call step (UpstreamHttp.send)", () => {
  it.effect("hands a 2xx answer back whole for the wire format to read", () =>
    Effect.gen(function*() {
      const body = "x".repeat(20_000)
      const response = yield* UpstreamHttp.send(answering(200, body), request)
      assert.strictEqual(new TextDecoder().decode(yield* UpstreamHttp.bytesOf(response)).length, 20_000)
    }))

  it.effect("cuts a refusal's body to 8 KiB before the provider's reader maps it", () =>
    Effect.gen(function*() {
      const seen: Array<UpstreamAnswer.UpstreamResponse> = []
      const error = yield* UpstreamHttp.send(answering(429, "y".repeat(20_000)), request, (response, now) => {
        seen.push(response)
        return BedrockAnswer.fromResponse(response, now)
      }).pipe(Effect.flip)
      assert.strictEqual(seen.length, 1)
      assert.strictEqual(seen[0]!.status, 429)
      assert.strictEqual((seen[0]!.body as string).length, 8192)
      assert.strictEqual(error.reason._tag, "RateLimited")
    }))

  it.effect("maps a refusal with the common reader when the wire format names none", () =>
    Effect.gen(function*() {
      const error = yield* UpstreamHttp.send(answering(401, JSON.stringify({ error: { message: "bad key" } })), request).pipe(Effect.flip)
      assert.strictEqual(error.reason._tag, "AuthFailed")
    }))

  it("is the only place in providers/ that sends a call and maps its failure, and bearer headers are built in UpstreamHttp.ts alone", () => {
    const folder = NodePath.join(import.meta.dirname, "..", "..", "src", "providers")
    const files = Fs.readdirSync(folder, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
    // A listing's failure is a line in the log, never an UpstreamError: it reads the status alone.
    const sends = files.filter((f) => f !== "UpstreamHttp.ts" && f !== "ServedModels.ts" && /\.execute\(/u.test(Fs.readFileSync(NodePath.join(folder, f), "utf8")))
    const bearers = files.filter((f) => f !== "UpstreamHttp.ts" && /Bearer \$\{/u.test(Fs.readFileSync(NodePath.join(folder, f), "utf8")))
    assert.deepStrictEqual(sends, [])
    assert.deepStrictEqual(bearers, [])
  })
})
