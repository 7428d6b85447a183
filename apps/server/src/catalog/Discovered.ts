import type * as DiscoveredModels from "@switchyard/core/catalog/DiscoveredModels"
import { Context, Layer } from "effect"

/**
 * The models each discovering provider's server serves, as last listed (`"discover": true`): the
 * live catalog makes them endpoints beside the ones listed by hand (`DiscoveredModels.ts` in core).
 */
export class Discovered extends Context.Service<Discovered, {
  /** The served models of a provider; `undefined` until its server was first listed. */
  readonly of: (slug: string) => ReadonlyArray<DiscoveredModels.ServedModel> | undefined
  /** Keeps a provider's served models; whether they differ from the ones kept before. */
  readonly set: (slug: string, models: ReadonlyArray<DiscoveredModels.ServedModel>) => boolean
}>()("@switchyard/server/catalog/Discovered") {
  static readonly layer = Layer.sync(Discovered, () => {
    const bySlug = new Map<string, ReadonlyArray<DiscoveredModels.ServedModel>>()
    return Discovered.of({
      of: (slug) => bySlug.get(slug),
      set: (slug, models) => {
        const same = JSON.stringify(bySlug.get(slug)) === JSON.stringify(models)
        bySlug.set(slug, models)
        return !same
      }
    })
  })
}

