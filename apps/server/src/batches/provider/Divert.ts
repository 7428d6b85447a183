import * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import * as Money from "@switchyard/core/catalog/Money"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import type { Reservation } from "@switchyard/core/store/Accounting"
import { Effect, Result } from "effect"
import * as UpstreamInput from "../../providers/UpstreamInput.ts"
import type { NewProviderBatch } from "../../store/batches/ProviderBatchStore.ts"
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

/** Where a line goes in a provider batch: the API, provider, endpoint and job, and its request lines. */
interface Target {
  readonly api: Catalog.BatchApi
  readonly provider: string
  readonly endpoint: string
  readonly job: BatchProvider.Job
  readonly requests: ReadonlyArray<string>
  readonly inputs: number
  readonly hold: Reservation
}

/** One job's worth of lines: those of one endpoint and job, within the provider's limits. */
interface Chunk {
  readonly target: Target
  readonly lines: Array<{ readonly line: number; readonly target: Target }>
  requests: number
  inputs: number
  bytes: number
}

/**
 * The lines of one endpoint and job cut into chunks within the batch API's limits (requests,
 * inputs and bytes per job), in their order; a chunk with fewer requests than the job's minimum
 * is left out (its lines run live).
 */
const chunked = (entries: ReadonlyArray<{ readonly line: number; readonly target: Target }>, limits: BatchProvider.Limits) => {
  const chunks: Array<Chunk> = []
  let open: Chunk | undefined
  for (const entry of entries) {
    const { target } = entry
    const bytes = target.requests.reduce((n, r) => n + Buffer.byteLength(r) + 1, 0)
    if (
      open === undefined || open.requests + target.requests.length > limits.maxRequests ||
      open.inputs + target.inputs > limits.maxInputs || open.bytes + bytes > limits.maxBytes
    ) {
      open = { target, lines: [], requests: 0, inputs: 0, bytes: 0 }
      chunks.push(open)
    }
    open.lines.push(entry)
    open.requests += target.requests.length
    open.inputs += target.inputs
    open.bytes += bytes
  }
  return { jobs: chunks.filter((c) => c.requests >= limits.minRequests), small: chunks.filter((c) => c.requests < limits.minRequests) }
}

/**
 * Splits a unit's lines: those whose route's first endpoint has a batch price and a provider with
 * a batch API go to provider batches (one per endpoint and job, cut within the API's limits), each
 * held at the batch price; the others run live, in their order.
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
  const targetOf = (batch: BatchIdentity, entry: Line, models: ReadonlySet<string>) =>
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
      const requests = yield* Effect.option(run.apis[api].requests(upstreamId(entry.line), upstream))
      if (requests._tag === "None") return undefined
      // Held at the batch price while the unit runs: a line the limits cannot pay for runs live (and is refused there).
      const worst = Cost.compute(price, { prompt_tokens: prepared.bound.tokens, images: prepared.bound.images }).total
      const hold = yield* run.accounting.reserve({
        keyId: batch.caller.keyId,
        workspaceId: batch.caller.workspaceId,
        amountNanos: Money.toUnits(worst, 9, "up"),
        byok: false
      })
      return {
        api,
        provider: provider.slug,
        endpoint: first.candidate.id,
        job: requests.value.job,
        requests: requests.value.lines,
        inputs: UpstreamInput.count(upstream.input),
        hold
      } satisfies Target
    })

  return <L extends Line>(batch: BatchIdentity & { readonly execution: string }, lines: ReadonlyArray<L>): Effect.Effect<Diverted<L>> =>
    Effect.gen(function*() {
      const models = batchModels()
      if (batch.endpoint !== "/v1/embeddings" || batch.execution === "live" || models.size === 0) {
        return { live: lines, providerBatches: [], release: Effect.void }
      }
      const live: Array<L> = []
      const holds: Array<Reservation> = []
      const groups = new Map<string, Array<{ readonly line: number; readonly target: Target }>>()
      const byLine = new Map(lines.map((entry) => [entry.line, entry]))
      yield* Effect.forEach(lines, (entry) =>
        Effect.gen(function*() {
          const target = yield* Effect.result(targetOf(batch, entry, models))
          if (Result.isFailure(target) || target.success === undefined) {
            live.push(entry)
            return
          }
          const t = target.success
          const key = `${t.endpoint}|${JSON.stringify(t.job)}`
          const group = groups.get(key) ?? []
          group.push({ line: entry.line, target: t })
          groups.set(key, group)
        }), { concurrency: 16, discard: true })
      const providerBatches: Array<NewProviderBatch> = []
      for (const group of groups.values()) {
        group.sort((a, b) => a.line - b.line)
        const { jobs, small } = chunked(group, run.apis[group[0]!.target.api].limits)
        for (const chunk of jobs) {
          holds.push(...chunk.lines.map((l) => l.target.hold))
          const { api, provider, endpoint, job } = chunk.target
          providerBatches.push({
            lines: chunk.lines.map((l) => l.line),
            api,
            provider,
            endpoint,
            job: JSON.stringify(job),
            requests: `${chunk.lines.flatMap((l) => l.target.requests).join("\n")}\n`
          })
        }
        // Too few for a job of this provider: these run live, their batch holds let go now.
        for (const chunk of small) {
          for (const { line, target } of chunk.lines) {
            yield* run.accounting.release(target.hold)
            live.push(byLine.get(line)!)
          }
        }
      }
      // The live lines keep their order (the unit's outcomes follow it).
      const order = new Map(lines.map((entry, i) => [entry.line, i]))
      live.sort((a, b) => order.get(a.line)! - order.get(b.line)!)
      return { live, providerBatches, release: Effect.forEach(holds, run.accounting.release, { discard: true }) }
    })
}
