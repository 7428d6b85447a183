import { inProcess } from "@switchyard/core/adapters/Registry"
import type { Provider } from "@switchyard/core/catalog/Catalog"
import type { ByokStore } from "@switchyard/core/store/ByokStore"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Effect, Option } from "effect"
import type { LoadedCatalog } from "./CatalogLoader.ts"

/**
 * Whether a provider is active for a workspace: configured with the gateway's own credential, or
 * with one the workspace stored (BYOK). The in-process provider needs none.
 */
export const activeFor = (loaded: LoadedCatalog, byok: ByokStore["Service"]) =>
(workspaceId: string, provider: Provider): Effect.Effect<boolean, StoreUnavailable> =>
  !provider.enabled
    ? Effect.succeed(false)
    : loaded.active.has(provider.slug) || inProcess(provider.adapter)
    ? Effect.succeed(loaded.active.has(provider.slug))
    : byok.credentialFor(workspaceId, provider.slug).pipe(
      Effect.map(Option.isSome),
      // A stored credential that does not open cannot serve: the provider is not active for
      // this workspace (the requests that need it say why).
      Effect.catchTag("CredentialUnreadable", () => Effect.succeed(false))
    )
