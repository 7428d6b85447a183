/**
 * The port through which the server reads and writes API keys.
 *
 * @since 0.1.0
 */
import type { StoreUnavailable } from "./StoreUnavailable.ts"
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { ApiKeyRecord, KeyScope, LimitReset } from "../schema/ApiKey.ts"

/**
 * What authentication needs to know of a key, looked up by the hash of its secret.
 *
 * @since 0.1.0
 */
export interface KeyIdentity {
  readonly id: string
  readonly hash: string
  readonly kind: "standard" | "management"
  readonly scope: KeyScope
  readonly userId: string
  readonly workspaceId: string
  readonly disabled: boolean
  readonly expiresAt: Date | null
}

/**
 * @since 0.1.0
 */
export interface ListKeysRequest {
  /** Whose keys; `null` lists every member's keys of the workspace (for its admins). */
  readonly userId: string | null
  readonly workspaceId: string
  readonly includeDisabled: boolean
  readonly offset: number
  readonly limit: number
  readonly now: Date
}

/**
 * A new standard key; the caller generated the secret and passes only its hash and label.
 *
 * @since 0.1.0
 */
export interface CreateKeyRequest {
  /** Default `standard`. */
  readonly kind?: "standard" | "management"
  /** What a management key reaches; default `user`. */
  readonly scope?: KeyScope
  readonly userId: string
  readonly workspaceId: string
  readonly hash: string
  readonly label: string
  readonly name: string
  readonly limitNanos: bigint | null
  readonly limitReset: LimitReset | null
  readonly includeByokInLimit: boolean
  readonly expiresAt: Date | null
  readonly externalUser: string | null
  readonly now: Date
}

/**
 * The changes of `PATCH /keys/{hash}`; omitted fields stay.
 *
 * @since 0.1.0
 */
export interface KeyPatch {
  readonly name?: string
  readonly disabled?: boolean
  readonly limitNanos?: bigint | null
  readonly limitReset?: LimitReset | null
  readonly includeByokInLimit?: boolean
  readonly expiresAt?: Date | null
}

/**
 * A key the user reaches, by hash: one of their own, or any key of a workspace they administer.
 *
 * @since 0.1.0
 */
export interface OwnKeyRequest {
  readonly userId: string
  /** Only a key of this workspace (a management key of `workspace` scope reaches no other). */
  readonly workspaceId?: string
  readonly hash: string
  readonly now: Date
}

/**
 * The calling key's record and today's count of its zero-cost requests.
 *
 * @since 0.1.0
 */
export interface CurrentKey {
  readonly record: ApiKeyRecord
  readonly kind: "standard" | "management"
  readonly zeroCostRequestsToday: number
}

/**
 * @since 0.1.0
 */
export class ApiKeyStore extends Context.Service<ApiKeyStore, {
  readonly findByHash: (hash: string) => Effect.Effect<Option.Option<KeyIdentity>, StoreUnavailable>
  readonly list: (request: ListKeysRequest) => Effect.Effect<ReadonlyArray<ApiKeyRecord>, StoreUnavailable>
  readonly defaultWorkspaceOf: (userId: string) => Effect.Effect<Option.Option<string>, StoreUnavailable>
  readonly isMember: (userId: string, workspaceId: string) => Effect.Effect<boolean, StoreUnavailable>
  /** The user's role in the workspace; `None` when not a member. */
  readonly roleIn: (userId: string, workspaceId: string) => Effect.Effect<Option.Option<"admin" | "member">, StoreUnavailable>
  /** Every workspace the user is a member of. */
  readonly workspacesOf: (userId: string) => Effect.Effect<ReadonlyArray<string>, StoreUnavailable>
  readonly get: (request: OwnKeyRequest) => Effect.Effect<Option.Option<ApiKeyRecord>, StoreUnavailable>
  readonly current: (keyId: string, now: Date) => Effect.Effect<Option.Option<CurrentKey>, StoreUnavailable>
  readonly create: (request: CreateKeyRequest) => Effect.Effect<ApiKeyRecord, StoreUnavailable>
  readonly update: (request: OwnKeyRequest & { readonly patch: KeyPatch }) => Effect.Effect<Option.Option<ApiKeyRecord>, StoreUnavailable>
  /** Deletes the key (it stops authenticating; its ledger rows stay). False when there was none. */
  readonly remove: (request: OwnKeyRequest) => Effect.Effect<boolean, StoreUnavailable>
}>()("@switchyard/core/store/ApiKeyStore") {}
