import type * as Catalog from "@switchyard/core/catalog/Catalog"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import { Accounting } from "@switchyard/core/store/Accounting"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import { Cause, Clock, Config, Context, Duration, Effect, Layer, Option } from "effect"
import * as Crypto from "node:crypto"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import * as Preparation from "../embeddings/Preparation.ts"
import { GatewayMetrics } from "../observability/GatewayMetrics.ts"
import { EndpointHealth } from "../pipeline/EndpointHealth.ts"
import { resolveModel } from "../pipeline/Route.ts"
import { Workspaces } from "../pipeline/Workspaces.ts"
import { connectionOf } from "../providers/Adapters.ts"
import * as Azure from "../providers/Azure.ts"
import * as BedrockBatch from "../providers/BedrockBatch.ts"
import * as GeminiBatch from "../providers/GeminiBatch.ts"
import * as MistralBatch from "../providers/MistralBatch.ts"
import * as OpenAiBatch from "../providers/OpenAiBatch.ts"
import * as VertexBatch from "../providers/VertexBatch.ts"
import * as VoyageBatch from "../providers/VoyageBatch.ts"
import { BatchStore } from "../store/batches/BatchStore.ts"
import { GatewayProcess } from "../store/money/GatewayProcesses.ts"
import * as BatchWire from "./BatchWire.ts"
import { type ProviderBatchRow, ProviderBatchStore } from "../store/batches/ProviderBatchStore.ts"
import type { BatchIdentity } from "./BatchLines.ts"
import { LineRunner } from "./LineRunner.ts"
import { cleanup } from "./provider/Cleanup.ts"
import * as Divert from "./provider/Divert.ts"
import { poll } from "./provider/Poll.ts"
import { type Runtime, type Step, stopOf } from "./provider/Runtime.ts"
import { settle } from "./provider/Settle.ts"
import { submit } from "./provider/Submit.ts"

const ProviderBatchesConfig = Config.all({
  /** How often a provider batch is asked how it stands. */
  pollMs: Config.Int("SWITCHYARD_PROVIDER_BATCH_POLL_MS").pipe(Config.withDefault(60_000)),
  /** How often a replica looks for provider batches due (the batch runner's poll). */
  loopMs: Config.Int("SWITCHYARD_BATCH_POLL_MS").pipe(Config.withDefault(1_000)),
  /** How long one step on a provider batch keeps its claim at most. */
  leaseMs: Config.Int("SWITCHYARD_BATCH_LEASE_MS").pipe(Config.withDefault(30_000)),
  /** How long batch files are kept: a provider batch's files at the provider go by then at the latest. */
  retention: BatchWire.Retention
})

/**
 * Provider batches: where a batch may (its creator did not ask for live execution only), the lines
 * of a unit whose route's first endpoint has a batch price and a provider with a batch API go to
 * that provider's batch API instead of live calls, one provider batch per unit, endpoint and job,
 * within the API's limits (provider/Divert.ts). The runner here submits each (upload, create:
 * provider/Submit.ts), polls it (provider/Poll.ts), and maps its results back into the batch's
 * output and error files, charging each served line at the endpoint's batch price under the
 * line's generation id, and running live the lines the job did not serve (provider/Settle.ts,
 * provider/Files.ts); then deletes its files at the provider (provider/Cleanup.ts). Every step is
 * one claim in the store, so any replica may take the next one, and the provider's ids are stored
 * before they are relied on: a restart polls, it does not submit again.
 */
export class ProviderBatches extends Context.Service<ProviderBatches, {
  readonly divert: <L extends { readonly line: number; readonly text: string }>(
    batch: BatchIdentity & { readonly execution: string },
    lines: ReadonlyArray<L>
  ) => Effect.Effect<Divert.Diverted<L>>
}>()("@switchyard/server/batches/ProviderBatches") {
  static readonly layer = Layer.effect(
    ProviderBatches,
    Effect.gen(function*() {
      const loaded = yield* CurrentCatalog
      const apis: Record<Catalog.BatchApi, BatchProvider.BatchProvider> = {
        openai: yield* OpenAiBatch.make,
        azure: yield* Azure.makeBatch,
        mistral: yield* MistralBatch.make,
        voyage: yield* VoyageBatch.make,
        gemini: yield* GeminiBatch.make,
        bedrock: yield* BedrockBatch.make(),
        vertex: yield* VertexBatch.make
      }
      const { retention, ...settings } = yield* ProviderBatchesConfig
      const run: Runtime = {
        config: { ...settings, retentionMs: Duration.toMillis(retention) },
        loaded,
        accounting: yield* Accounting,
        store: yield* BatchStore,
        parts: yield* ProviderBatchStore,
        lineRunner: yield* LineRunner,
        metrics: yield* GatewayMetrics,
        prepare: Preparation.make({
          loaded,
          health: yield* EndpointHealth,
          byok: yield* ByokStore,
          workspaces: yield* Workspaces
        }),
        apis,
        resolved: resolveModel(loaded),
        owner: `provider-batches-${Crypto.randomBytes(8).toString("hex")}`
      }
      yield* runner(run)
      return ProviderBatches.of({ divert: Divert.make(run) })
    })
  )
}

/** One step on a claimed provider batch: submitted, polled, or (its batch or provider gone) settled. */
const step = (run: Runtime, part: ProviderBatchRow) =>
  Effect.gen(function*() {
    const { parts, owner, loaded } = run
    const now = yield* Clock.currentTimeMillis
    const provider = loaded.catalog.providers.find((p) => p.slug === part.provider)
    const api = run.apis[part.api as Catalog.BatchApi]
    const connection = provider === undefined ? undefined : connectionOf(provider, loaded.credentials.get(provider.slug))
    const later: Step["later"] = (ms, changes = {}) => parts.update(part, owner, { status: part.status, nextPollAt: now + ms, ...changes })
    const cleanupDue = part.upstream_file_id !== null && part.cleaned_at === null &&
      (part.status === "done" || Number(part.created_at) < now - run.config.retentionMs)
    if (cleanupDue) {
      // A provider no longer in the catalog: nothing to delete its files with.
      if (api === undefined || connection === undefined) return yield* parts.cleaned(part, owner, now)
      return yield* cleanup(run, { part, now, api, connection, later })
    }
    const row = Option.getOrUndefined(yield* run.store.batchById(part.batch_id))
    if (row === undefined) {
      return yield* parts.finish(part, owner, { output: "", errors: "", completed: 0, failed: 0, costNanos: 0n, upstreamStatus: "cancelled", now })
    }
    if (api === undefined || connection === undefined) return yield* settle(run, row, part, undefined, undefined)
    const claimed: Step = { part, row, now, stop: stopOf(row), api, connection, later }
    return yield* (part.status === "submitting" ? submit(run, claimed) : poll(run, claimed))
  }).pipe(Effect.asVoid, Effect.annotateLogs({ batch_id: part.batch_id }))

/**
 * The provider batches' runner, in the server's scope: two loops that claim a provider batch due
 * and take one step on it, on the system clock as the batch runner's.
 */
const runner = (run: Runtime) =>
  Effect.gen(function*() {
    const { config, parts, owner } = run
    const loop = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const claimed = yield* parts.claim(owner, now, config.leaseMs, now - config.retentionMs)
      if (Option.isNone(claimed)) return false
      const part = claimed.value
      yield* step(run, part).pipe(
        Effect.catchCause((cause) =>
          Cause.hasInterruptsOnly(cause)
            ? Effect.failCause(cause)
            : Effect.logError("provider batch step failed", Cause.pretty(cause)).pipe(
              Effect.andThen(Effect.ignore(parts.update(part, owner, { status: part.status, nextPollAt: now + config.pollMs })))
            )
        )
      )
      return true
    }).pipe(
      Effect.catchCause((cause) =>
        Cause.hasInterruptsOnly(cause)
          ? Effect.failCause(cause)
          : Effect.logError("provider batch work failed", Cause.pretty(cause)).pipe(Effect.as(false))
      ),
      Effect.flatMap((worked) => (worked ? Effect.void : Effect.sleep(Duration.millis(config.loopMs)))),
      Effect.forever
    )

    // The embedded store with one worker is this process's alone: a claim found at start is a dead one's.
    if ((yield* GatewayProcess).sole) {
      yield* Effect.ignore(parts.releaseAll)
    }
    // Background timing on the system clock, as the batch runner's.
    const systemClock = Effect.provideService(Clock.Clock, Clock.Clock.defaultValue())
    for (let i = 0; i < 2; i++) yield* Effect.forkScoped(systemClock(loop))
  })
