import { Api } from "@switchyard/core/api/Api"
import { Caller } from "@switchyard/core/api/Authorization"
import { creditsFromNanos } from "@switchyard/core/accounting/UsageWindow"
import * as Cost from "@switchyard/core/catalog/Cost"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import * as Money from "@switchyard/core/catalog/Money"
import { BadRequest, NotFound } from "@switchyard/core/schema/ApiError"
import type { ActivityItem, GenerationRecord } from "@switchyard/core/schema/Activity"
import { ApiKeyStore } from "@switchyard/core/store/ApiKeyStore"
import * as AttemptRecord from "@switchyard/core/upstream/AttemptRecord"
import { Clock, Effect, Option } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import { RecentFailures } from "../observability/RecentFailures.ts"
import type { GenerationRow } from "../store/money/LedgerReports.ts"
import { LedgerReports } from "../store/money/LedgerReports.ts"
import { LedgerRetention } from "../store/money/LedgerRetention.ts"
import * as GenerationId from "../pipeline/GenerationId.ts"
import { reachable, requireManagement, resolveWorkspace } from "./Management.ts"
import * as StoreFailure from "../http/StoreFailure.ts"
import { isLineGeneration } from "../batches/BatchLines.ts"

/** How many completed UTC days `GET /activity` covers before today. */
const activityDays = 30

/** How many failures `GET /activity/failures` lists, newest first. */
const failuresListed = 50

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

// Token counts are those the answer reported: the upstream's plus the cached items' (whose
// tokens were billed when first embedded); `native_tokens_cached` is the cached part. The fields
// the gateway does not know are explained in `GenerationRecord`'s notes.
const toGeneration = (
  row: GenerationRow,
  names: { readonly nameOf: (slug: string) => string; readonly apiType: string; readonly cacheDiscount: number }
): GenerationRecord => {
  const cost = creditsFromNanos(row.costNanos)
  const promptTokens = row.promptTokens + row.cachedTokens
  const attempts = AttemptRecord.decode(row.attempts)
  const served = attempts?.find((a) => a.reason === null)
  return {
    id: row.generationId,
    api_type: names.apiType,
    app_id: null,
    cache_discount: row.cachedTokens > 0 ? names.cacheDiscount : null,
    cancelled: false,
    created_at: row.createdAt.toISOString(),
    data_region: "global",
    external_user: row.externalUser,
    finish_reason: null,
    generation_time: served?.latency_ms ?? null,
    http_referer: null,
    is_byok: row.isByok,
    latency: row.latencyMs,
    model: row.model,
    moderation_latency: null,
    native_finish_reason: null,
    native_tokens_cached: row.cachedTokens,
    native_tokens_completion: 0,
    native_tokens_completion_images: null,
    native_tokens_prompt: promptTokens,
    native_tokens_reasoning: null,
    num_fetches: null,
    num_input_audio_prompt: null,
    num_media_completion: null,
    num_media_prompt: null,
    num_search_results: null,
    origin: "",
    preset_id: null,
    provider_name: names.nameOf(row.provider),
    provider_responses: attempts === undefined ? null : attempts.map((a) => ({
      provider_name: names.nameOf(a.provider),
      endpoint_id: a.endpoint,
      model_permaslug: row.model,
      is_byok: a.byok,
      ...(a.latency_ms === null ? {} : { latency: a.latency_ms }),
      status: a.status,
      ...(a.upstream_id === null ? {} : { id: a.upstream_id }),
      ...(a.reason === null ? {} : { reason: a.reason })
    })),
    router: null,
    service_tier: null,
    streamed: false,
    tokens_completion: 0,
    tokens_prompt: promptTokens,
    total_cost: cost,
    upstream_id: served?.upstream_id ?? null,
    upstream_inference_cost: row.isByok ? cost : null,
    usage: row.isByok ? 0 : cost,
    user_agent: null,
    web_search_engine: null,
    workspace_id: row.workspaceId,
    cached: row.cachedItems > 0,
    served_from_cache: attempts === undefined ? null : attempts.length === 0,
    provider: row.provider,
    tokens_total: row.totalTokens + row.cachedTokens,
    // A line of a batch: served in a job at the provider's batch API (its attempt says so), else live.
    batch_mode: served?.mode === "provider_batch" ? "provider_batch" : isLineGeneration(row.generationId) ? "live" : null,
    ...(served?.vector !== undefined ? { vector: served.vector } : {})
  }
}

export const ActivityHandlers = HttpApiBuilder.group(
  Api,
  "activity",
  Effect.fn(function*(handlers) {
    const reports = yield* LedgerReports
    const failures = yield* RecentFailures
    const retention = yield* LedgerRetention
    const keys = yield* ApiKeyStore
    const loaded = yield* CurrentCatalog
    // Indexed once per catalog snapshot (providers managed at runtime swap it).
    let indexed:
      | { readonly catalog: unknown; readonly names: ReadonlyMap<string, string>; readonly rerank: ReadonlySet<string>; readonly prices: ReadonlyMap<string, Catalog.Pricing> }
      | undefined
    const indexes = () => {
      const catalog = loaded.catalog
      if (indexed?.catalog === catalog) return indexed
      indexed = {
        catalog,
        names: new Map(catalog.providers.map((p) => [p.slug, p.name])),
        // A ledger row's task is its model's: the catalog serves a model for one task.
        rerank: new Set(catalog.providers.flatMap((p) => p.endpoints.filter((e) => e.task === "rerank").map((e) => e.model.toLowerCase()))),
        // What cached tokens would cost at each endpoint's current prompt price (no per-request part:
        // a request is charged its request price whether or not the cache answered some of it).
        prices: new Map(catalog.providers.flatMap((p) => p.endpoints.map((e) => [`${p.slug}@${e.model.toLowerCase()}`, e.pricing] as const)))
      }
      return indexed
    }
    const nameOf = (slug: string) => indexes().names.get(slug) ?? slug
    const apiTypeOf = (model: string) => (indexes().rerank.has(model.toLowerCase()) ? "rerank" : "embeddings")
    const savings = (provider: string, model: string, cachedTokens: number) => {
      const pricing = indexes().prices.get(`${provider}@${model.toLowerCase()}`)
      return pricing === undefined || cachedTokens === 0
        ? 0
        : Money.toNumber(Cost.compute(pricing, { prompt_tokens: cachedTokens, requests: 0 }).prompt)
    }
    return handlers
      .handle("generation", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* Caller
          // A standard key sees its own workspace's generations; a management key those of every
          // workspace its user belongs to.
          const workspaceIds = yield* reachable(keys, caller)
          const found = yield* reports.generation(query.id, workspaceIds)
          if (Option.isNone(found)) {
            // An id made before the cut of the last prune may have had a row: its details are gone.
            const madeAt = GenerationId.timeOf(query.id)
            const cut = madeAt === undefined ? Option.none() : yield* retention.prunedBefore
            if (madeAt !== undefined && Option.isSome(cut) && madeAt < cut.value.getTime()) {
              return yield* new NotFound({
                message: `Generation ${query.id} is past the ledger's retention period (${retention.days} days): ` +
                  "its details were pruned; its amounts remain in the activity totals and key usage"
              })
            }
            return yield* new NotFound({ message: `No generation ${query.id}` })
          }
          const row = found.value
          return {
            data: toGeneration(row, {
              nameOf,
              apiType: apiTypeOf(row.model),
              cacheDiscount: savings(row.provider, row.model, row.cachedTokens)
            })
          }
        })))
      .handle("activity", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          const workspaceId = yield* resolveWorkspace(keys, query.workspace_id, caller.workspaceId)
          const now = yield* Clock.currentTimeMillis
          const today = dayOf(now)
          const first = dayOf(now - activityDays * 86_400_000)
          if (query.date !== undefined && (Number.isNaN(Date.parse(`${query.date}T00:00:00Z`)) || query.date < first || query.date > today)) {
            return yield* new BadRequest({
              message: `date must be a UTC day from ${first} to ${today} (the last ${activityDays} days and today)`,
              metadata: { field: "date" }
            })
          }
          const rows = yield* reports.activity({
            workspaceId,
            fromDay: query.date ?? first,
            toDay: query.date ?? today,
            keyHash: query.api_key_hash,
            userId: query.user_id
          })
          const data = rows.map((r): ActivityItem => ({
            date: r.day,
            model: r.model,
            model_permaslug: r.model,
            endpoint_id: `${r.provider}@${r.model.toLowerCase()}`,
            provider_name: nameOf(r.provider),
            usage: creditsFromNanos(r.costNanos),
            byok_usage_inference: creditsFromNanos(r.byokNanos),
            requests: r.requests,
            prompt_tokens: r.promptTokens,
            completion_tokens: 0,
            reasoning_tokens: 0,
            cached_tokens: r.cachedTokens,
            cache_savings: savings(r.provider, r.model, r.cachedTokens),
            task: apiTypeOf(r.model),
            ...(query.group_by === "workspace" ? { workspace_id: r.workspaceId } : {})
          }))
          return { data }
        })))
      .handle("failures", ({ query }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* requireManagement
          const workspaceId = yield* resolveWorkspace(keys, query.workspace_id, caller.workspaceId)
          return { data: failures.of(workspaceId, failuresListed) }
        })))
  })
)
