/**
 * The port through which the server reads and writes API keys.
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { ApiKeyRecord } from "../schema/ApiKey.ts"

/**
 * What authentication needs to know of a key, looked up by the hash of its secret.
 *
 * @since 0.1.0
 */
export interface KeyIdentity {
  readonly id: string
  readonly hash: string
  readonly kind: "standard" | "management"
  readonly userId: string
  readonly workspaceId: string
  readonly disabled: boolean
  readonly expiresAt: Date | null
}

/**
 * @since 0.1.0
 */
export interface ListKeysRequest {
  readonly userId: string
  readonly workspaceId: string
  readonly includeDisabled: boolean
  readonly offset: number
  readonly limit: number
  readonly now: Date
}

/**
 * @since 0.1.0
 */
export class ApiKeyStore extends Context.Service<ApiKeyStore, {
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<KeyIdentity>>
  readonly list: (request: ListKeysRequest) => Effect.Effect<ReadonlyArray<ApiKeyRecord>>
  readonly defaultWorkspaceOf: (userId: string) => Effect.Effect<Option.Option<string>>
  readonly isMember: (userId: string, workspaceId: string) => Effect.Effect<boolean>
}>()("@switchyard/core/store/ApiKeyStore") {}
