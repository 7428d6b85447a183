import { assert, describe, it } from "@effect/vitest"
import * as ApiError from "@switchyard/core/schema/ApiError"
import * as InternError from "@switchyard/core/errors/InternError"
import { Effect, Runtime } from "effect"
import { HttpClientError, HttpClientRequest } from "effect/http"
import * as Failure from "../src/Failure.ts"

const context: Failure.Context = { baseUrl: "http://127.0.0.1:8080/api/v1", hasKey: true }

describe("Failure.describe", () => {
  it.effect("maps every integer-code error to its exit code and keeps the server's message", () =>
    Effect.gen(function*() {
      const expected: Record<number, number> = {
        400: 1, 401: 3, 402: 5, 403: 3, 404: 4, 408: 1, 413: 1, 429: 5, 500: 6, 502: 6, 503: 6, 524: 6, 529: 6
      }
      for (const status of Object.keys(ApiError.wire).map(Number) as Array<keyof typeof ApiError.wire>) {
        const failure = yield* Failure.describe(ApiError.fromStatus(status, "the server said so"), context)
        assert.strictEqual(failure.exitCode, expected[status], String(status))
        assert.include(failure.message, "the server said so")
        assert.include(failure.message, `HTTP ${status}`)
        assert.strictEqual(failure[Runtime.errorExitCode], failure.exitCode)
      }
    }))

  it.effect("maps the intern errors by their status", () =>
    Effect.gen(function*() {
      const busy = yield* Failure.describe(new InternError.InternBusy({ message: "it is provisioning" }), context)
      assert.strictEqual(busy.exitCode, Failure.ExitCode.refused)
      assert.include(busy.hint ?? "", "interns get")
      const missing = yield* Failure.describe(new InternError.InternNotFound({ message: "no intern x" }), context)
      assert.strictEqual(missing.exitCode, Failure.ExitCode.notFound)
      const upstream = yield* Failure.describe(new InternError.UpstreamUnavailable({ message: "down" }), context)
      assert.strictEqual(upstream.exitCode, Failure.ExitCode.unavailable)
    }))

  it.effect("points a 404 at what can explain it: the route for a model whose providers are all out, the model list for an unknown model", () =>
    Effect.gen(function*() {
      const noRoute = yield* Failure.describe(
        new ApiError.NotFound({ message: "No allowed provider", metadata: { model: "acme/embed", reason: "every endpoint serving the model was excluded", candidates: [] } }),
        context
      )
      assert.include(noRoute.hint ?? "", "switchyard route explain")
      assert.notInclude(noRoute.hint ?? "", "keys list")
      const unknown = yield* Failure.describe(new ApiError.NotFound({ message: "Model \"acme/x\" does not exist", metadata: { model: "acme/x" } }), context)
      assert.include(unknown.hint ?? "", "switchyard models list")
      assert.notInclude(unknown.hint ?? "", "keys list")
    }))

  it.effect("names the list of the kind of thing the command named, and how to enable a disabled provider", () =>
    Effect.gen(function*() {
      const provider = yield* Failure.describe(new ApiError.NotFound({ message: "No provider acme" }), { ...context, listCommand: "switchyard providers list" })
      assert.include(provider.hint ?? "", "`switchyard providers list`")
      assert.notInclude(provider.hint ?? "", "keys list")
      const disabled = yield* Failure.describe(
        new ApiError.NotFound({
          message: "Model \"acme/embed\" has no enabled provider: acme is disabled",
          metadata: { model: "acme/embed", reason: "no enabled provider", candidates: [], disabled: ["acme"] }
        }),
        context
      )
      assert.include(disabled.hint ?? "", "providers update SLUG --enable")
    }))

  it.effect("tells a missing key from a refused one", () =>
    Effect.gen(function*() {
      const withKey = yield* Failure.describe(new ApiError.Unauthorized({ message: "unknown key" }), context)
      assert.include(withKey.hint ?? "", "was refused")
      const withoutKey = yield* Failure.describe(new ApiError.Unauthorized({ message: "missing" }), { ...context, hasKey: false })
      assert.include(withoutKey.hint ?? "", "No key was given")
    }))

  it.effect("explains an unreachable gateway with its address", () =>
    Effect.gen(function*() {
      const error = new HttpClientError.HttpClientError({
        reason: new HttpClientError.TransportError({ request: HttpClientRequest.get("http://127.0.0.1:8080/api/v1/keys"), cause: new Error("connect ECONNREFUSED") })
      })
      const failure = yield* Failure.describe(error, context)
      assert.strictEqual(failure.exitCode, Failure.ExitCode.unavailable)
      assert.include(failure.message, "http://127.0.0.1:8080/api/v1")
      assert.include(failure.message, "ECONNREFUSED")
      assert.include(failure.hint ?? "", "pnpm start")
    }))

  it.effect("treats usage errors and bad base URLs as usage, and anything else as unexpected", () =>
    Effect.gen(function*() {
      assert.strictEqual((yield* Failure.describe(new Failure.Usage({ message: "x" }), context)).exitCode, Failure.ExitCode.usage)
      const unexpected = yield* Failure.describe(new Error("boom"), context)
      assert.strictEqual(unexpected.exitCode, Failure.ExitCode.refused)
      assert.include(unexpected.message, "boom")
    }))

  it("documents every exit code", () => {
    assert.deepStrictEqual(Failure.exitCodeTable.map(([code]) => code), Object.values(Failure.ExitCode))
  })
})
