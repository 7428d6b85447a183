import * as ModelListing from "@switchyard/core/catalog/ModelListing"
import { Api } from "@switchyard/core/api/Api"
import { Caller } from "@switchyard/core/api/Authorization"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import type { Endpoint, Provider } from "@switchyard/core/catalog/Catalog"
import * as Cost from "@switchyard/core/catalog/Cost"
import { NotFound } from "@switchyard/core/schema/ApiError"
import { endpointId } from "@switchyard/core/routing/Candidates"
import type { Percentiles } from "@switchyard/core/routing/EndpointStats"
import { recentlyFailed } from "@switchyard/core/routing/EndpointStats"
import type { EndpointRecord, ProviderRecord } from "@switchyard/core/schema/ProviderListing"
import { ByokStore } from "@switchyard/core/store/ByokStore"
import { Clock, Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentCatalog } from "../catalog/CatalogLoader.ts"
import * as WorkspaceProviders from "../catalog/WorkspaceProviders.ts"
import { EndpointHealth } from "../pipeline/EndpointHealth.ts"
import { Administrators } from "../auth/Administrators.ts"
import { LiveCatalog } from "../catalog/LiveCatalog.ts"
import { ProviderRepo } from "../store/credentials/ProviderRepo.ts"
import * as StoreFailure from "../http/StoreFailure.ts"

const scaled = (p: Percentiles | undefined, factor: number) =>
  p === undefined || p.p50 === undefined || p.p75 === undefined || p.p90 === undefined || p.p99 === undefined
    ? null
    : { p50: p.p50 * factor, p75: p.p75 * factor, p90: p.p90 * factor, p99: p.p99 * factor }

const publicModality = (m: string) => (m === "tokens" ? "text" : m)

export const ProvidersHandlers = HttpApiBuilder.group(
  Api,
  "providers",
  Effect.fn(function*(handlers) {
    const loaded = yield* CurrentCatalog
    const health = yield* EndpointHealth
    const byok = yield* ByokStore
    const administrators = yield* Administrators
    const live = yield* LiveCatalog
    const repo = yield* ProviderRepo

    // Active for this caller: configured with the gateway's own credential, or the workspace's.
    const activeFor = WorkspaceProviders.activeFor(loaded, byok)

    const endpointRecord = (provider: Provider, endpoint: Endpoint, active: boolean, now: number): EndpointRecord => {
      const id = endpointId(provider, endpoint)
      const stats = health.statsOf(id, now) ?? {}
      return {
        name: `${provider.name} | ${endpoint.model}`,
        model_id: endpoint.model,
        model_name: endpoint.name ?? endpoint.model,
        provider_name: provider.name,
        provider: provider.slug,
        tag: endpoint.variant === "default" ? provider.slug : `${provider.slug}/${endpoint.variant}`,
        context_length: endpoint.max_input_tokens ?? 0,
        max_prompt_tokens: endpoint.max_input_tokens ?? null,
        max_completion_tokens: null,
        pricing: {
          prompt: Cost.perToken(endpoint.pricing.prompt),
          completion: Cost.perToken(endpoint.pricing.completion),
          request: endpoint.pricing.request,
          image: endpoint.pricing.image,
          audio: endpoint.pricing.audio,
          ...(endpoint.task === "rerank" ? { search: endpoint.pricing.search } : {})
        },
        quantization: endpoint.quantization,
        status: !active ? -10 : recentlyFailed(stats, now) ? -1 : 0,
        supported_parameters: endpoint.supported_parameters,
        supports_implicit_caching: false,
        supports_tool_choice: { auto: false, function: false, none: false, required: false },
        latency_last_30m: scaled(stats.latency, 1000),
        throughput_last_30m: scaled(stats.throughput, 1),
        uptime_last_5m: health.uptime(id, now, 5 * 60_000),
        uptime_last_30m: health.uptime(id, now, 30 * 60_000),
        uptime_last_1d: health.uptime(id, now, 24 * 60 * 60_000),
        data_collection: provider.data_collection,
        zdr: provider.zdr,
        ...(endpoint.dimensions !== undefined ? { dimensions: endpoint.dimensions } : {}),
        ...ModelListing.vectorOptionsOf(provider, endpoint),
        task: endpoint.task,
        active
      }
    }

    return handlers
      .handle("list", () =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* Caller
          const data: Array<ProviderRecord> = []
          // An administrator sees where each provider comes from, the disabled ones too, and whether its credential is set.
          const administrator = yield* administrators.isAdministrator(caller)
          const declared = new Set(live.declared.catalog.providers.map((p) => p.slug))
          const stored = administrator ? yield* repo.all : []
          const managed = new Map(stored.map((one) => [one.provider.slug, one]))
          // A provider disabled through the API is listed to administrators only.
          const providers = loaded.catalog.providers.filter((p) => administrator || p.enabled || declared.has(p.slug))
          for (const provider of providers) {
            const one = managed.get(provider.slug)
            data.push({
              slug: provider.slug,
              name: provider.name,
              privacy_policy_url: null,
              terms_of_service_url: null,
              status_page_url: null,
              active: yield* activeFor(caller.workspaceId, provider),
              data_collection: provider.data_collection,
              zdr: provider.zdr,
              ...(administrator
                ? {
                  source: one === undefined ? "config" as const : "api" as const,
                  enabled: provider.enabled,
                  api_key: one === undefined
                    ? { set: live.declared.credentials.has(provider.slug), last4: null }
                    : { set: one.credentialSet, last4: one.last4 }
                }
                : {})
            })
          }
          return { data }
        })))
      .handle("endpoints", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          const caller = yield* Caller
          const model = `${params.author}/${params.slug}`.toLowerCase()
          const now = yield* Clock.currentTimeMillis
          const endpoints: Array<EndpointRecord> = []
          const served: Array<Endpoint> = []
          const modalities = new Set<string>()
          for (const provider of loaded.catalog.providers) {
            const own = provider.endpoints.filter((e) => e.model.toLowerCase() === model)
            if (own.length === 0) continue
            const active = yield* activeFor(caller.workspaceId, provider)
            for (const endpoint of own) {
              served.push(endpoint)
              for (const m of Catalog.inputModalitiesOf(provider, endpoint)) modalities.add(publicModality(m))
              endpoints.push(endpointRecord(provider, endpoint, active, now))
            }
          }
          if (served.length === 0) return yield* new NotFound({ message: `No model ${model} in the catalog` })
          const inputs = [...modalities]
          const named = served.find((e) => e.name !== undefined)
          const described = served.find((e) => e.description !== undefined)
          return {
            data: {
              id: served[0]!.model,
              name: named?.name ?? served[0]!.model,
              created: Math.max(0, ...served.map((e) => e.created ?? 0)),
              description: described?.description ?? "",
              architecture: {
                input_modalities: inputs,
                output_modalities: ["embeddings"],
                modality: `${inputs.join("+")}->embeddings`,
                instruct_type: null,
                tokenizer: null
              },
              endpoints
            }
          }
        })))
  })
)
