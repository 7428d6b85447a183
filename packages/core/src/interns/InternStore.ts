/**
 * The port through which the server reads and writes interns.
 *
 * **Details**
 *
 * Status changes are compare-and-set: {@link InternStoreShape.transition} writes only when the
 * stored status and run are still the ones the caller decided from, so an operation and a runtime
 * event that race cannot both win. Every operation fails with `StoreUnavailable` when the store
 * does not answer.
 *
 * @since 0.1.0
 */
import { Context } from "effect"
import type { Effect, Option } from "effect"
import type { NameTaken } from "../errors/InternError.ts"
import type { StoreUnavailable } from "../store/StoreUnavailable.ts"
import type { Intern, InternProgress, InternStatus } from "../schema/Intern.ts"

/**
 * An intern as stored: its facts plus the run the runtime is on.
 *
 * @since 0.1.0
 */
export interface StoredIntern extends Intern {
  /** The run of the last start; events of other runs are stale. */
  readonly runId: string | null
}

/**
 * @since 0.1.0
 */
interface NewIntern {
  readonly id: string
  readonly workspaceId: string
  readonly creatorUserId: string
  readonly name: string
  readonly description: string | null
  readonly instructions: string | null
  readonly model: string | null
  readonly attachedVaultId: string | null
  readonly now: Date
}

/**
 * Settings to change; an absent key stays unchanged.
 *
 * @since 0.1.0
 */
interface SettingsPatch {
  readonly name?: string
  readonly description?: string | null
  readonly instructions?: string | null
  readonly model?: string | null
}

/**
 * One page request of the listing: ids after `after`, in id order.
 *
 * @since 0.1.0
 */
interface ListRequest {
  readonly workspaceId: string
  readonly statuses: ReadonlyArray<InternStatus>
  readonly after: string | undefined
  readonly limit: number
}

/**
 * A status change and what comes with it.
 *
 * @since 0.1.0
 */
export interface Change {
  readonly status: InternStatus
  readonly progress: InternProgress | null
  readonly lastFailureMessage: string | null
  readonly runId?: string | null
  readonly hostname?: string
  readonly vaultId?: string
}

/**
 * @since 0.1.0
 */
export interface InternStoreShape {
  /** Fails with `NameTaken` when the creator has an intern of that name in the workspace. */
  readonly insert: (intern: NewIntern) => Effect.Effect<StoredIntern, NameTaken | StoreUnavailable>
  readonly find: (id: string) => Effect.Effect<Option.Option<StoredIntern>, StoreUnavailable>
  /** The intern when it belongs to the workspace; `None` otherwise, whether or not it exists. */
  readonly findInWorkspace: (workspaceId: string, id: string) => Effect.Effect<Option.Option<StoredIntern>, StoreUnavailable>
  readonly findByVault: (workspaceId: string, vaultId: string) => Effect.Effect<Option.Option<StoredIntern>, StoreUnavailable>
  /** Up to `limit` interns of the workspace, ids ascending. */
  readonly list: (request: ListRequest) => Effect.Effect<ReadonlyArray<StoredIntern>, StoreUnavailable>
  /** Every intern of every workspace, for reconciling at start-up. */
  readonly all: Effect.Effect<ReadonlyArray<StoredIntern>, StoreUnavailable>
  readonly updateSettings: (
    id: string,
    patch: SettingsPatch,
    now: Date
  ) => Effect.Effect<Option.Option<StoredIntern>, NameTaken | StoreUnavailable>
  /** Writes the change when the status and run are still `expected`; `None` when they moved. */
  readonly transition: (
    id: string,
    expected: { readonly status: InternStatus; readonly runId: string | null },
    change: Change,
    now: Date
  ) => Effect.Effect<Option.Option<StoredIntern>, StoreUnavailable>
  /** Removes the intern when its status is still `expectedStatus`. */
  readonly remove: (id: string, expectedStatus: InternStatus) => Effect.Effect<boolean, StoreUnavailable>
}

/**
 * The intern store in use.
 *
 * @since 0.1.0
 */
export class InternStore extends Context.Service<InternStore, InternStoreShape>()(
  "@switchyard/core/interns/InternStore"
) {}
