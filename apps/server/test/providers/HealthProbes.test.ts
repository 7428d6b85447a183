import { assert, describe, it } from "@effect/vitest"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import { endpointId } from "@switchyard/core/routing/Candidates"
import { recentlyFailed } from "@switchyard/core/routing/EndpointStats"
import { Clock, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import * as FakeInfinity from "../fakes/FakeInfinity.ts"
import * as FakeOllama from "../fakes/FakeOllama.ts"
import * as FakeTei from "../fakes/FakeTei.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVllm from "../fakes/FakeVllm.ts"
import * as HealthProbes from "../../src/pipeline/HealthProbes.ts"
import { Replicas } from "../../src/providers/Replicas.ts"
import { EndpointHealth } from "../../src/pipeline/EndpointHealth.ts"
import { overHttp } from "./ProviderHarness.ts"
import { HttpClient } from "effect/http"

const teiProvider = (urls: ReadonlyArray<string>, extra: Partial<Catalog.Provider> = {}): Catalog.Provider => ({
  slug: "gpu-tei",
  name: "GPU TEI",
  adapter: "tei",
  base_urls: urls,
  data_collection: "deny",
  zdr: false,
  enabled: true,
  endpoints: [{
    model: "baai/bge-small",
    upstream_model: "BAAI/bge-small-en-v1.5",
    variant: "default",
    task: "embeddings"
  } as unknown as Catalog.Endpoint],
  ...extra
})

const services = Layer.mergeAll(Replicas.layer, EndpointHealth.layer)

describe("Health probes of self-hosted servers", () => {
  it.effect("a down replica is held out at the next probe, before any request, and back at the first probe it answers", () =>
    Effect.gen(function*() {
      const replicas = yield* Replicas
      const health = yield* EndpointHealth
      const up = new Map([["http://a", true], ["http://b", true]])
      const probed: Array<string> = []
      const provider = teiProvider(["http://a", "http://b"])
      const probes = HealthProbes.make({
        providers: () => [provider],
        replicas,
        health,
        probe: (_, url) => Effect.sync(() => {
          probed.push(url)
          return up.get(url) ?? false
        })
      })
      yield* Effect.forkScoped(probes.loop)
      const healthy = Effect.map(Clock.currentTimeMillis, (now) => replicas.report(provider, now).map((r) => r.healthy))

      yield* TestClock.adjust("1 second")
      assert.deepStrictEqual(yield* healthy, [true, true])
      up.set("http://b", false)
      // Within the default interval of 5 s nothing is probed; at 5 s the down one is found.
      yield* TestClock.adjust("3 seconds")
      assert.deepStrictEqual(yield* healthy, [true, true])
      const before = probed.length
      yield* TestClock.adjust("2 seconds")
      assert.strictEqual(probed.length, before + 2)
      assert.deepStrictEqual(yield* healthy, [true, false])
      // Back up: the next probe returns it, long before the 30 s outage window would.
      up.set("http://b", true)
      yield* TestClock.adjust("5 seconds")
      assert.deepStrictEqual(yield* healthy, [true, true])
    }).pipe(Effect.scoped, Effect.provide(services)))

  it.effect("every replica down marks the provider's endpoints failed, so routing puts them last; one up ends that", () =>
    Effect.gen(function*() {
      const replicas = yield* Replicas
      const health = yield* EndpointHealth
      let serving = true
      const provider = teiProvider(["http://a"], { health_interval_s: 2 })
      const id = endpointId(provider, provider.endpoints[0]!)
      const probes = HealthProbes.make({ providers: () => [provider], replicas, health, probe: () => Effect.sync(() => serving) })
      yield* Effect.forkScoped(probes.loop)
      const failed = Effect.map(Clock.currentTimeMillis, (now) => recentlyFailed(health.statsOf(id, now) ?? {}, now))
      yield* TestClock.adjust("1 second")
      assert.isFalse(yield* failed)
      serving = false
      yield* TestClock.adjust("2 seconds")
      assert.isTrue(yield* failed)
      // Still down: each probe keeps the window open past its 30 s.
      yield* TestClock.adjust("40 seconds")
      assert.isTrue(yield* failed)
      serving = true
      yield* TestClock.adjust("2 seconds")
      assert.isFalse(yield* failed)
    }).pipe(Effect.scoped, Effect.provide(services)))

  it.live("probes each server's own health route over HTTP: up answers true, a 503 or a hang false within the bound", () =>
    Effect.gen(function*() {
      const client = yield* HttpClient.HttpClient
      const probe = HealthProbes.httpProbe(client, () => undefined)
      const servers = [
        ["tei", yield* FakeUpstream.scoped(() => FakeTei.start())],
        ["infinity", yield* FakeUpstream.scoped(() => FakeInfinity.start({ apiKey: "k" }))],
        ["vllm", yield* FakeUpstream.scoped(() => FakeVllm.start({ apiKey: "k" }))],
        ["ollama", yield* FakeUpstream.scoped(() => FakeOllama.start())]
      ] as const
      for (const [adapter, server] of servers) {
        const provider = teiProvider([server.url], { adapter })
        assert.isTrue(yield* probe(provider, server.url, 1_000), adapter)
        assert.strictEqual(server.requests.at(-1)!.path, HealthProbes.healthPathOf(adapter))
        server.setBehaviour({ _tag: "Status", status: 503 })
        assert.isFalse(yield* probe(provider, server.url, 1_000), `${adapter} 503`)
        server.setBehaviour({ _tag: "Hang" })
        assert.isFalse(yield* probe(provider, server.url, 200), `${adapter} hanging`)
        server.setBehaviour(FakeUpstream.normal)
      }
    }).pipe(overHttp))
})
