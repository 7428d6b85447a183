import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import type { Reservation } from "@switchyard/core/store/Accounting"
import { Effect, Option, Result } from "effect"
import * as OpenAiCompatible from "../../providers/OpenAiCompatible.ts"
import * as UpstreamInput from "../../providers/UpstreamInput.ts"
import type { NewProviderBatch } from "../../store/ProviderBatchStore.ts"
import { type BatchIdentity, isText } from "../BatchLines.ts"
import { requestOf, type Runtime, upstreamId, upstreamRequestOf } from "./Runtime.ts"

/** A unit's lines split: those that run live now, and the provider batches the others go to. */
export interface Diverted<L> {
  readonly live: ReadonlyArray<L>
  readonly providerBatches: ReadonlyArray<NewProviderBatch>
  /** Drops the holds that admitted the diverted lines (once their provider batches are written). */
  readonly release: Effect.Effect<void>
}

type Line = { readonly line: number; readonly text: string }

/** Where a line goes in a provider batch: the API, provider and endpoint, and the line of its file. */
interface Target {
  readonly api: Catalog.BatchApi
  readonly provider: string
  readonly endpoint: string
  readonly request: string
}

/**
 * Splits a unit's lines: those whose route's first endpoint has a batch price and a provider with
 * a batch API go to provider batches (one per endpoint), each held at the batch price; the others
 * run live, in their order.
 */
export const make = (run: Runtime) => {
  const { loaded } = run
  // The models some active provider serves at a batch price through a batch API, per catalog
  // snapshot: a line of any other model runs live without being routed twice.
  let batchable: { readonly catalog: Catalog.Catalog; readonly active: ReadonlySet<string>; readonly models: ReadonlySet<string> } | undefined
  const batchModels = () => {
    if (batchable?.catalog === loaded.catalog && batchable.active === loaded.active) return batchable.models
    const models = new Set<string>()
    for (const provider of loaded.catalog.providers) {
      if (Catalog.batchApiOf(provider) === undefined || !loaded.active.has(provider.slug)) continue
      for (const endpoint of provider.endpoints) if (endpoint.pricing.batch !== undefined) models.add(endpoint.model.toLowerCase())
    }
    batchable = { catalog: loaded.catalog, active: loaded.active, models }
    return models
  }

  /** The provider batch a line goes to, held at its batch price; `undefined` for a line that runs live. */
  const targetOf = (batch: BatchIdentity, entry: Line, models: ReadonlySet<string>, holds: Array<Reservation>) =>
    Effect.gen(function*() {
      const found = yield* requestOf(run, batch, entry.line, entry.text)
      if (Result.isFailure(found) || !isText(found.success.request.input)) return undefined
      const read = found.success
      if (!models.has(read.request.model.toLowerCase())) return undefined
      const prepared = yield* run.prepare(batch.caller, read.request, {})
      const first = prepared.attempts[0]
      // The workspace's own credential, or its embeddings cache: the live path's business.
      if (first === undefined || first.byok || prepared.cachePolicy.read) return undefined
      const { provider, endpoint } = first.candidate
      const api = Catalog.batchApiOf(provider)
      const price = Catalog.batchPricingOf(endpoint.pricing)
      if (api === undefined || price === undefined || !loaded.active.has(provider.slug)) return undefined
      if (UpstreamInput.count(prepared.input) > Catalog.batchSizeOf(endpoint)) return undefined
      const { upstream, asked } = upstreamRequestOf(read.request, prepared, first.candidate)
      // A provider batch answers the provider's vectors as they are: a line whose vectors or
      // inputs the gateway cuts, types or windows runs live.
      if (!asked.plain) return undefined
      const body = yield* Effect.option(OpenAiCompatible.requestBody(OpenAiCompatible.dialects[provider.dialect ?? "generic"], upstream))
      if (Option.isNone(body)) return undefined
      // Held at the batch price while the unit runs: a line the limits cannot pay for runs live (and is refused there).
      const worst = Cost.compute(price, { prompt_tokens: prepared.bound.tokens, images: prepared.bound.images }).total
      const hold = yield* run.accounting.reserve({
        keyId: batch.caller.keyId,
        workspaceId: batch.caller.workspaceId,
        amountNanos: Money.toUnits(worst, 9, "up"),
        byok: false
      })
      holds.push(hold)
      return { api, provider: provider.slug, endpoint: first.candidate.id, request: run.apis[api].requestLine(upstreamId(entry.line), body.value) } satisfies Target
    })

  return <L extends Line>(batch: BatchIdentity & { readonly execution: string }, lines: ReadonlyArray<L>): Effect.Effect<Diverted<L>> =>
    Effect.gen(function*() {
      const models = batchModels()
      if (batch.endpoint !== "/v1/embeddings" || batch.execution === "live" || models.size === 0) {
        return { live: lines, providerBatches: [], release: Effect.void }
      }
      const live: Array<L> = []
      const holds: Array<Reservation> = []
      const groups = new Map<string, { api: Catalog.BatchApi; provider: string; lines: Array<number>; requests: Array<string> }>()
      yield* Effect.forEach(lines, (entry) =>
        Effect.gen(function*() {
          const target = yield* Effect.result(targetOf(batch, entry, models, holds))
          if (Result.isFailure(target) || target.success === undefined) {
            live.push(entry)
            return
          }
          const t = target.success
          const group = groups.get(t.endpoint) ?? { api: t.api, provider: t.provider, lines: [], requests: [] }
          group.lines.push(entry.line)
          group.requests.push(t.request)
          groups.set(t.endpoint, group)
        }), { concurrency: 16, discard: true })
      // The live lines keep their order (the unit's outcomes follow it).
      const order = new Map(lines.map((entry, i) => [entry.line, i]))
      live.sort((a, b) => order.get(a.line)! - order.get(b.line)!)
      return {
        live,
        providerBatches: [...groups.entries()].map(([endpoint, g]) => ({
          lines: g.lines.sort((a, b) => a - b),
          api: g.api,
          provider: g.provider,
          endpoint,
          requests: `${g.requests.join("\n")}\n`
        })),
        release: Effect.forEach(holds, run.accounting.release, { discard: true })
      }
    })
}
