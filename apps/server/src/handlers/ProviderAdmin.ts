import { Api } from "@switchyard/core/api/Api"
import type * as Catalog from "@switchyard/core/catalog/Catalog"
import { BadRequest, Conflict, NotFound } from "@switchyard/core/schema/ApiError"
import * as ManagedProvider from "@switchyard/core/catalog/ManagedProvider"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect, Option, type Redacted } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { Administrators } from "../auth/Administrators.ts"
import { LiveCatalog } from "../catalog/LiveCatalog.ts"
import { refuseNul } from "../http/NulCharacters.ts"
import * as StoreFailure from "../http/StoreFailure.ts"
import { Adapters, connectionOf, scrub } from "../providers/Adapters.ts"
import { Replicas } from "../providers/Replicas.ts"
import { AuditLog } from "../store/audit/AuditLog.ts"
import { ProviderRepo, type StoredProvider } from "../store/credentials/ProviderRepo.ts"
import { fieldsOf } from "./Management.ts"

const declaredHere = (slug: string) =>
  new Conflict({
    message: `Provider ${slug} comes from the config file (or the built-in catalog); change it there`,
    metadata: { source: "config" }
  })
const noProvider = (slug: string) => new NotFound({ message: `No provider ${slug.slice(0, 100)}` })

const invalid = (error: Catalog.CatalogError) => new BadRequest({ message: error.message, metadata: { issues: error.issues } })

// What an audit entry shows of a provider: its config-file form, the credential as set or not.
const recorded = (stored: StoredProvider) => ({
  ...ManagedProvider.encode(stored.provider),
  api_key: { set: stored.credentialSet, last4: stored.last4 }
})

const testTimeoutMs = 15_000

// One small call to an endpoint: its status and latency, the credential scrubbed from any error.
const probe = (adapters: Adapters["Service"], provider: Catalog.Provider, credential: Option.Option<Redacted.Redacted<string>>) =>
  (endpoint: Catalog.Endpoint) =>
    Effect.gen(function*() {
      const connection = connectionOf(provider, Option.getOrUndefined(credential))
      const adapter = adapters[provider.adapter]
      const started = yield* Clock.currentTimeMillis
      const call = endpoint.task === "rerank"
        ? adapter.rerank === undefined
          ? Effect.die(new Error(`the ${provider.adapter} adapter has no rerank API`))
          : Effect.asVoid(adapter.rerank(connection, { upstreamModel: endpoint.upstream_model, query: "ping", documents: [{ text: "ping" }, { text: "pong" }] }))
        : Effect.asVoid(adapter.embed(connection, {
          upstreamModel: endpoint.upstream_model,
          input: { _tag: "Texts", texts: ["ping"] },
          encodingFormat: "float"
        }))
      const outcome = yield* call.pipe(
        // The message names the provider tested, as an attempt's does.
        Effect.mapError((error) => UpstreamError.atProvider(provider.slug)(scrub(error, connection))),
        Effect.timeoutOption(testTimeoutMs),
        Effect.result
      )
      const latency = (yield* Clock.currentTimeMillis) - started
      const base = { model: endpoint.model, task: endpoint.task, latency_ms: latency }
      if (outcome._tag === "Success") {
        return Option.isSome(outcome.success)
          ? { ...base, ok: true, status: 200, error: null }
          : { ...base, ok: false, status: null, error: `no answer within ${testTimeoutMs} ms` }
      }
      const reason = outcome.failure.reason as { readonly upstream_status?: unknown }
      return {
        ...base,
        ok: false,
        status: typeof reason.upstream_status === "number" ? reason.upstream_status : null,
        error: outcome.failure.message
      }
    })

export const ProviderAdminHandlers = HttpApiBuilder.group(
  Api,
  "providerAdmin",
  Effect.fn(function*(handlers) {
    const administrators = yield* Administrators
    const repo = yield* ProviderRepo
    const live = yield* LiveCatalog
    const replicas = yield* Replicas
    const audit = yield* AuditLog
    const adapters = yield* Adapters

    const declared = (slug: string) => live.declared.catalog.providers.find((p) => p.slug === slug)

    const shown = (stored: StoredProvider): ManagedProvider.ManagedProvider => ({
      slug: stored.provider.slug,
      name: stored.provider.name,
      source: "api",
      enabled: stored.provider.enabled,
      active: live.current().active.has(stored.provider.slug),
      api_key: { set: stored.credentialSet, last4: stored.last4 },
      provider: ManagedProvider.encode(stored.provider),
      updated_at: new Date(stored.updatedAt).toISOString()
    })
    const shownDeclared = (provider: Catalog.Provider): ManagedProvider.ManagedProvider => ({
      slug: provider.slug,
      name: provider.name,
      source: "config",
      enabled: provider.enabled,
      active: live.declared.active.has(provider.slug),
      api_key: { set: live.declared.credentials.has(provider.slug), last4: null },
      provider: ManagedProvider.encode(provider),
      updated_at: null
    })
    const stored = (slug: string) =>
      Effect.flatMap(repo.get(slug), Option.match({ onNone: () => Effect.fail(noProvider(slug)), onSome: Effect.succeed }))

    return handlers
      .handle("create", ({ payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          yield* refuseNul(payload)
          const input = yield* ManagedProvider.decodeInput(payload).pipe(Effect.mapError(invalid))
          if (declared(input.provider.slug) !== undefined) return yield* declaredHere(input.provider.slug)
          const now = yield* Clock.currentTimeMillis
          const created = yield* audit.recorded(
            repo.create({ provider: input.provider, apiKey: input.apiKey ?? undefined, now }),
            Option.match({
              onNone: () => undefined,
              onSome: (one) => ({ action: "provider.create", target: { type: "provider", id: one.provider.slug }, workspaceId: null, after: recorded(one) })
            })
          )
          if (Option.isNone(created)) {
            return yield* new Conflict({ message: `A provider ${input.provider.slug} exists already`, metadata: { field: "slug" } })
          }
          yield* live.refresh
          return { data: shown(created.value) }
        })))
      .handle("get", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          const fromConfig = declared(params.slug)
          const now = yield* Clock.currentTimeMillis
          const withReplicas = (data: ManagedProvider.ManagedProvider, provider: Catalog.Provider) => {
            const shownReplicas = replicas.report(provider, now)
            return shownReplicas.length === 0 ? data : { ...data, replicas: shownReplicas }
          }
          if (fromConfig !== undefined) return { data: withReplicas(shownDeclared(fromConfig), fromConfig) }
          const one = yield* stored(params.slug)
          return { data: withReplicas(shown(one), one.provider) }
        })))
      .handle("update", ({ params, payload }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          yield* refuseNul(payload)
          if (declared(params.slug) !== undefined) return yield* declaredHere(params.slug)
          if (payload.slug !== undefined && payload.slug !== params.slug) {
            return yield* new BadRequest({ message: "slug cannot change: create a provider under the new slug", metadata: { field: "slug" } })
          }
          const before = yield* stored(params.slug)
          const { api_key, ...fields } = payload
          const input = yield* ManagedProvider.decodeInput({
            ...ManagedProvider.patched(before.provider, fields),
            ...(api_key !== undefined ? { api_key } : {})
          }).pipe(Effect.mapError(invalid))
          const changed = [...Object.keys(fields), ...(api_key !== undefined ? ["api_key"] : [])]
          const updated = yield* audit.recorded(
            repo.update({ provider: input.provider, apiKey: input.apiKey, now: yield* Clock.currentTimeMillis }),
            Option.match({
              onNone: () => undefined,
              onSome: (after) => ({
                action: after.provider.enabled === before.provider.enabled || Object.keys(fields).some((f) => f !== "enabled") || api_key !== undefined
                  ? "provider.update"
                  : after.provider.enabled ? "provider.enable" : "provider.disable",
                target: { type: "provider", id: params.slug },
                workspaceId: null,
                before: fieldsOf(recorded(before), changed),
                after: fieldsOf(recorded(after), changed)
              })
            })
          )
          if (Option.isNone(updated)) return yield* noProvider(params.slug)
          yield* live.refresh
          return { data: shown(updated.value) }
        })))
      .handle("delete", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          if (declared(params.slug) !== undefined) return yield* declaredHere(params.slug)
          const removed = yield* audit.recorded(
            repo.remove(params.slug),
            Option.match({
              onNone: () => undefined,
              onSome: (gone) => ({ action: "provider.delete", target: { type: "provider", id: params.slug }, workspaceId: null, before: recorded(gone) })
            })
          )
          if (Option.isNone(removed)) return yield* noProvider(params.slug)
          yield* live.refresh
          return { deleted: true as const }
        })))
      .handle("test", ({ params }) =>
        StoreFailure.answer(Effect.gen(function*() {
          yield* administrators.require
          const fromConfig = declared(params.slug)
          const target = fromConfig !== undefined
            ? { provider: fromConfig, credential: Option.fromNullishOr(live.declared.credentials.get(params.slug)) }
            : yield* Effect.map(stored(params.slug), (one) => ({
              provider: one.provider,
              credential: Option.isSome(one.credential)
                ? one.credential
                : Option.fromNullishOr(live.current().credentials.get(params.slug))
            }))
          const endpoints = yield* Effect.forEach(target.provider.endpoints, probe(adapters, target.provider, target.credential), { concurrency: 4 })
          return { data: { slug: params.slug, ok: endpoints.every((e) => e.ok), endpoints } }
        })))
  })
)
