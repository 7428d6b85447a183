/**
 * The money store's port: its operations and the values they take and give, with no
 * implementation (`MoneyStore` picks one by dialect).
 */
import type * as MoneyModel from "@switchyard/core/accounting/MoneyModel"
import type { RefusalReason } from "@switchyard/core/store/Accounting"
import type { Duration, Effect } from "effect"
import type { SqlError } from "effect/sql/SqlError"

/** A ledger row as a flush writes it (money as decimal strings, its time as an ISO-8601 string). */
export interface LedgerRow {
  readonly generation: string
  readonly key: string
  readonly workspace: string
  readonly model: string
  readonly provider: string
  readonly prompt_tokens: number
  readonly total_tokens: number
  readonly cost: string
  readonly byok: boolean
  readonly created: string
  readonly latency_ms: number | null
  readonly cached_items: number
  readonly cached_tokens: number
  /** The request's upstream attempts as a JSON array (`AttemptRecord`), or null when unrecorded. */
  readonly attempts: string | null
  /** The lease whose amount the charge leaves, if the request was admitted from one. */
  readonly lease: string | null
  /** The lease row's fencing token the request was admitted under; the row is written only under it. */
  readonly fence: string | null
}

/** A grant to the spend lease `id`, owned by the gateway process `owner` (core's money model takes the same). */
export type GrantRequest = MoneyModel.Grant

/** The outcome of a grant (core's money model declares it): `ok`, a key of another workspace, or the refusing scope. */
export type GrantOutcome = MoneyModel.GrantOutcome<"ok" | "wrong_workspace" | RefusalReason>

/** What became of a flushed row (core's money model declares it). */
export type Flushed = MoneyModel.Flushed

interface CreditRead {
  readonly credits: bigint
  readonly usage: bigint
  readonly held: bigint
}

export interface CreditGrant {
  readonly id: string
  readonly workspaceId: string
  readonly amountNanos: bigint
  readonly note: string | null
  readonly grantedByKeyId: string | null
  readonly nowMs: number
}

/** The registration of gateway processes sharing the store, and the sweep of dead ones' holds. */
interface Processes {
  /** Says the process `id` is alive (creating its row). */
  readonly heartbeat: (id: string) => Effect.Effect<void, SqlError>
  /** Deletes the holds of every owner not seen within `staleAfter` (and their rows, but `self`'s); how many holds. */
  readonly sweep: (self: string, staleAfter: Duration.Duration) => Effect.Effect<number, SqlError>
  /** The store belongs to `self` alone: every other process's holds and rows are a dead process's. */
  readonly claim: (self: string) => Effect.Effect<void, SqlError>
  /** A clean stop: the process's holds and its row go. */
  readonly end: (self: string) => Effect.Effect<void, SqlError>
  /** How many processes were seen within `staleAfter`. */
  readonly live: (staleAfter: Duration.Duration) => Effect.Effect<number, SqlError>
}

export interface MoneyStore {
  readonly dialect: "pg" | "sqlite"
  /** Checks the key and its scopes and grants the lease a slice (or renews it when the ask grants nothing). */
  readonly grant: (request: GrantRequest) => Effect.Effect<GrantOutcome, SqlError>
  /** Hands back `amount` of a lease; its row goes when nothing is left. */
  readonly handBack: (id: string, amount: bigint) => Effect.Effect<void, SqlError>
  /** Ends a lease: its row goes, if it still carries `fence`. */
  readonly end: (id: string, fence: string) => Effect.Effect<void, SqlError>
  /** The lease's row as the store has it, or `undefined` when it is gone. */
  readonly readLease: (id: string) => Effect.Effect<{ readonly amount: bigint; readonly fence: string } | undefined, SqlError>
  /**
   * Writes a batch of ledger rows in one transaction, with the spend counters, the workspaces'
   * usage and the leases' amounts they move; each lease used lives until at least `expiresAtMs`.
   * Idempotent by generation id; a row whose lease is gone or carries another token is settled
   * under the key's current room (written when it fits, core's `FencedLease.settlesMoved`) and
   * answered `fenced`.
   */
  readonly flush: (rows: ReadonlyArray<LedgerRow>, expiresAtMs: number) => Effect.Effect<ReadonlyArray<Flushed>, SqlError>
  /** The generation ids of `rows` found in the ledger, with their cost, once every flush under way ended. */
  readonly written: (rows: ReadonlyArray<LedgerRow>) => Effect.Effect<ReadonlyMap<string, bigint>, SqlError>
  /** A workspace's prepaid credits, usage and open non-BYOK holds. */
  readonly credits: (workspaceId: string, nowMs: number) => Effect.Effect<CreditRead, SqlError>
  /** Adds a credit grant and turns the workspace's prepaid credits on. */
  readonly addCredits: (grant: CreditGrant) => Effect.Effect<void, SqlError>
  readonly processes: Processes
}
