/**
 * The port through which bring-your-own-key provider credentials are stored and used.
 *
 * **When to use**
 *
 * The embeddings executor asks {@link ByokStore} `credentialFor(workspaceId, providerSlug)` for
 * each provider it may call: `Some` means "call this provider with the workspace's own
 * credential and mark the request `is_byok`"; `None` means "use the gateway's configured
 * credential".
 *
 * **Details**
 *
 * Secrets are encrypted at rest (AES-256-GCM) by the implementation and only ever leave it
 * wrapped in `Redacted`, so printing or logging them shows `<redacted>`. When a workspace has
 * several enabled credentials for one provider, the one with the lowest `sort_order` (the
 * oldest) is used.
 *
 * @since 0.1.0
 */
import type { StoreUnavailable } from "./StoreUnavailable.ts"
import { Context, Data } from "effect"
import type { Effect, Option, Redacted } from "effect"
import type { ByokKey } from "../schema/Byok.ts"

/**
 * @since 0.1.0
 */
export interface CreateCredential {
  readonly workspaceId: string
  readonly provider: string
  readonly secret: Redacted.Redacted<string>
  readonly name: string | null
  readonly disabled: boolean
  readonly now: Date
}

/**
 * Omitted fields stay as they are.
 *
 * @since 0.1.0
 */
export interface UpdateCredential {
  readonly secret?: Redacted.Redacted<string>
  readonly name?: string | null
  readonly disabled?: boolean
  readonly now: Date
}

/**
 * @since 0.1.0
 */
export interface ListCredentials {
  readonly workspaceIds: ReadonlyArray<string>
  readonly provider: string | undefined
  readonly offset: number
  readonly limit: number
}

/**
 * A workspace's stored credential for a provider exists but does not open with this gateway's
 * secret key: it was stored by a process with another `SWITCHYARD_SECRET_KEY`.
 *
 * @since 0.2.0
 */
export class CredentialUnreadable extends Data.TaggedError("CredentialUnreadable")<{ readonly provider: string }> {
  override get message(): string {
    return `The workspace's stored credential for ${this.provider} cannot be decrypted by this gateway ` +
      "(it was stored with another secret key). The operator must give every replica the same SWITCHYARD_SECRET_KEY."
  }
}

/**
 * @since 0.1.0
 */
export class ByokStore extends Context.Service<ByokStore, {
  /**
   * The enabled credential the workspace stored for the provider, if any. Fails with
   * {@link CredentialUnreadable} when the stored credential cannot be decrypted (it was sealed
   * with another secret key): the request needs it, and calling the provider with the gateway's
   * own credential instead would charge the wrong account.
   */
  readonly credentialFor: (
    workspaceId: string,
    providerSlug: string
  ) => Effect.Effect<Option.Option<Redacted.Redacted<string>>, CredentialUnreadable | StoreUnavailable>
  readonly list: (request: ListCredentials) => Effect.Effect<{ readonly data: ReadonlyArray<ByokKey>; readonly total: number }, StoreUnavailable>
  /** A credential by id, only if it belongs to one of `workspaceIds`. */
  readonly get: (id: string, workspaceIds: ReadonlyArray<string>) => Effect.Effect<Option.Option<ByokKey>, StoreUnavailable>
  readonly create: (request: CreateCredential) => Effect.Effect<ByokKey, StoreUnavailable>
  readonly update: (id: string, workspaceIds: ReadonlyArray<string>, patch: UpdateCredential) => Effect.Effect<Option.Option<ByokKey>, StoreUnavailable>
  readonly remove: (id: string, workspaceIds: ReadonlyArray<string>) => Effect.Effect<boolean, StoreUnavailable>
}>()("@switchyard/core/store/ByokStore") {}
