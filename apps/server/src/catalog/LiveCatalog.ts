import type * as Catalog from "@switchyard/core/catalog/Catalog"
import * as DiscoveredModels from "@switchyard/core/catalog/DiscoveredModels"
import { Clock, Config, Context, Effect, Layer, Option, Redacted, Schedule } from "effect"
import { type StoredProvider, ProviderRepo } from "../store/credentials/ProviderRepo.ts"
import * as CatalogLoader from "./CatalogLoader.ts"
import { Discovered } from "./Discovered.ts"

/**
 * How often each replica asks the store whether providers changed (one tiny read): a change made
 * through any replica reaches every other one's routing within this and a rebuild.
 */
const pollInterval = "500 millis"

/**
 * The catalog as it changes at runtime: the built-in one and the config file (fixed for the life
 * of the process), with the providers created through the API over them. Each rebuild is a new
 * immutable snapshot swapped in whole; a request reads one snapshot when it routes and keeps it
 * (`Route.snapshot`), so it finishes on the plan and the credentials it started with: a key
 * rotated meanwhile is used from the next request on (`Route.connectionFor`).
 */
export class LiveCatalog extends Context.Service<LiveCatalog, {
  /** The snapshot in force now. */
  readonly current: () => CatalogLoader.LoadedCatalog
  /** The catalog of the built-in providers and the config file: these answer 409 to changes. */
  readonly declared: CatalogLoader.LoadedCatalog
  /** Reads the store's providers now and swaps the snapshot (after a change made here). */
  readonly refresh: Effect.Effect<void>
}>()("@switchyard/server/catalog/LiveCatalog") {}

const credentialOf = (stored: StoredProvider) =>
  Effect.gen(function*() {
    if (Option.isSome(stored.credential)) return stored.credential
    const name = stored.provider.api_key_env
    if (name === undefined || name === null) return Option.none<Redacted.Redacted<string>>()
    const value = yield* Config.option(Config.Redacted(name)).pipe(Effect.orElseSucceed(() => Option.none()))
    return Option.filter(value, (v) => Redacted.value(v).trim() !== "")
  })

/**
 * The snapshot of the declared catalog with the stored providers added; a disabled one is in the
 * catalog but never active, so its models answer that their provider is disabled.
 */
const build = (
  declared: CatalogLoader.LoadedCatalog,
  stored: ReadonlyArray<StoredProvider>,
  discovered: Discovered["Service"] | undefined
) =>
  Effect.gen(function*() {
    // A discovering provider serves its server's models beside the endpoints listed by hand.
    const served = (p: Catalog.Provider) => {
      const models = p.discover === true ? discovered?.of(p.slug) : undefined
      return models === undefined ? p : DiscoveredModels.withDiscovered(p, models)
    }
    const providers: Array<Catalog.Provider> = declared.catalog.providers.map(served)
    if (stored.length === 0 && providers.every((p, i) => p === declared.catalog.providers[i])) return declared
    const declaredSlugs = new Set(declared.catalog.providers.map((p) => p.slug))
    const credentials = new Map(declared.credentials)
    const active = new Set(declared.active)
    for (const one of stored) {
      if (declaredSlugs.has(one.provider.slug)) continue
      providers.push(served(one.provider))
      if (!one.provider.enabled) continue
      const credential = yield* credentialOf(one)
      if (Option.isSome(credential)) credentials.set(one.provider.slug, credential.value)
      const needsNone = one.provider.api_key_env === undefined || one.provider.api_key_env === null
      if (Option.isSome(credential) || (needsNone && !one.credentialSet)) active.add(one.provider.slug)
    }
    return { catalog: { ...declared.catalog, providers }, credentials, active } satisfies CatalogLoader.LoadedCatalog
  })

/**
 * `CurrentCatalog` and `LiveCatalog` from the store. `CurrentCatalog`'s fields read the snapshot in
 * force at the moment they are read.
 */
export const layer = Layer.effectContext(Effect.gen(function*() {
  const declared = yield* CatalogLoader.load
  const repo = yield* ProviderRepo
  const discovered = Option.getOrUndefined(yield* Effect.serviceOption(Discovered))
  let version = yield* repo.version
  let snapshot = yield* build(declared, yield* repo.all, discovered)
  const reload = Effect.gen(function*() {
    const seen = yield* repo.version
    const next = yield* build(declared, yield* repo.all, discovered)
    version = seen
    snapshot = next
  })
  const refresh = reload.pipe(Effect.catchCause((cause) => Effect.logWarning("providers: could not reload the catalog", cause)))
  // The poll keeps step with the other processes, so it runs on the wall clock even where the
  // gateway runs on a test's clock: a test moving its clock by a day must not make it poll 172,800
  // times.
  yield* repo.version.pipe(
    Effect.flatMap((seen) => (seen === version ? Effect.void : reload)),
    Effect.catchCause((cause) => Effect.logDebug("providers: could not poll the store", cause)),
    Effect.repeat(Schedule.spaced(pollInterval)),
    Effect.provideService(Clock.Clock, Clock.Clock.defaultValue()),
    Effect.forkScoped
  )
  const live: CatalogLoader.LoadedCatalog = {
    get catalog() {
      return snapshot.catalog
    },
    get credentials() {
      return snapshot.credentials
    },
    get active() {
      return snapshot.active
    }
  }
  return Context.make(CatalogLoader.CurrentCatalog, live).pipe(
    Context.add(LiveCatalog, LiveCatalog.of({ current: () => snapshot, declared, refresh }))
  )
}))
