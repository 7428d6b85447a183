import { assert, describe, it } from "@effect/vitest"
import type { ProviderModule } from "@switchyard/core/adapters/ProviderModule"
import * as Registry from "@switchyard/core/adapters/Registry"
import { Effect, Layer } from "effect"
import { HttpClient, HttpClientResponse } from "effect/http"
import * as Adapters from "../../src/providers/Adapters.ts"
import { type WireFormatModule, wireFormats } from "../../src/providers/WireFormats.ts"

/** What an adapter's wire formats lack of what its module's kind and facts need, in words. */
const lacks = (module: ProviderModule, formats: WireFormatModule, adapter: Adapters.AdapterTable[Registry.AdapterId]): Array<string> => {
  const out: Array<string> = []
  if (module.kind === "self-hosted") {
    if (formats.server === undefined) out.push("a listing route and a health probe")
    else {
      if (!formats.server.listing.path.startsWith("/")) out.push("a listing route")
      if (!formats.server.healthPath.startsWith("/")) out.push("a health probe's route")
    }
  } else if (formats.server !== undefined) out.push("no listing or probe (it is no server of one's own)")
  if ((module.rerank !== "none") !== (adapter.rerank !== undefined)) out.push(module.rerank === "none" ? "no rerank API" : "a rerank API")
  if ((module.counter === "server") !== (adapter.tokenize !== undefined)) out.push("a tokenize route exactly when its server counts tokens")
  if (module.kind === "cloud" && !module.baseUrl.required && formats.placedBaseUrl === undefined) out.push("its host from where it runs")
  return out
}

// The adapters are made over a client that is never called: making one sends nothing.
const unused = HttpClient.make((request) => Effect.succeed(HttpClientResponse.fromWeb(request, new Response("", { status: 599 }))))

describe("the server's wire formats, keyed by the adapters' registry", () => {
  it.effect("give every adapter what its module says it has", () =>
    Effect.gen(function*() {
      const table = yield* Adapters.make
      assert.deepStrictEqual(Object.keys(wireFormats).sort(), [...Registry.adapterIds].sort())
      for (const module of Registry.modules) {
        assert.deepStrictEqual(lacks(module, wireFormats[module.id], table[module.id]), [], `adapter ${module.id}`)
      }
      // A planted gap: a self-hosted server without its listing, a rerank module without its API.
      const tei = Registry.moduleOf("tei")
      assert.include(lacks(tei, { ...wireFormats.tei, server: undefined }, table.tei), "a listing route and a health probe")
      assert.include(lacks(Registry.moduleOf("cohere"), wireFormats.cohere, { embed: table.cohere.embed }), "a rerank API")
    }).pipe(Effect.provide(Layer.succeed(HttpClient.HttpClient, unused))))

  it("place a connection where the module has no default host of its own", () => {
    assert.strictEqual(Adapters.connectionOf({ adapter: "bedrock", region: "eu-west-1" }, undefined).baseUrl, "https://bedrock-runtime.eu-west-1.amazonaws.com")
    assert.strictEqual(Adapters.connectionOf({ adapter: "vertex", location: "europe-west4", project: "p" }, undefined).baseUrl, "https://europe-west4-aiplatform.googleapis.com")
    for (const module of Registry.modules) assert.strictEqual(Adapters.defaultBaseUrls[module.id], module.baseUrl.default)
  })
})
