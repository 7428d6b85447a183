/**
 * The port through which requests are paid for: hold the worst case before the upstream call,
 * settle the actual cost after, and the workspace credit balance behind both.
 *
 * **When to use**
 *
 * Around every billed upstream call:
 *
 * 1. `reserve` the most the request can cost (its plan's worst case) before calling upstream;
 *    a 402 here means the request must not be sent.
 * 2. `settle` with the actual cost once the upstream answered; report the returned
 *    `costNanos` as the response's `usage.cost`.
 * 3. `release` when the request fails and nothing is charged.
 *
 * A request that costs nothing without any upstream call (the embeddings cache served every
 * item) skips the hold: `record` writes its ledger row after the same key checks.
 *
 * **Details**
 *
 * Money is integer nano-USD (`bigint`); one credit is one USD. A reservation counts what the
 * ledger charged in the key's current limit window plus every open hold, so N concurrent
 * requests on a key that can afford K are admitted at most K times, across processes sharing
 * one PostgreSQL. (The SQL store admits from spend leases a process holds in the store, see
 * core's `SpendLease`, and writes ledger rows in batches.) Every settlement writes exactly one
 * ledger row; the key listing's usage figures and the workspace's `total_usage` are sums of that
 * ledger (an implementation may keep counters of it, written with each row).
 *
 * The workspace's credit balance stops spending only once the workspace has prepaid credits:
 * the first `addCredits` turns them on. Until then spend is recorded exactly (ledger and
 * `total_usage`) and only key limits refuse. A BYOK request (served with the workspace's own
 * provider credential) never touches the credit balance, and counts toward the key's limit only
 * when the key has `include_byok_in_limit`.
 *
 * **Gotchas**
 *
 * - What a process holds in the store (its leases) expires (ten minutes after its last use by
 *   default) so that room left by a process that died stops counting; the SQL store releases a
 *   dead process's leases sooner (within about 40 s on PostgreSQL, at start on PGlite).
 * - `settle` never charges more than the hold plus whatever room the key and the workspace
 *   still have: a cost above the worst case is capped there, and the returned `capped` says so.
 * - `settle` is idempotent on `generationId`: a second call charges nothing and returns the
 *   first settlement's cost.
 *
 * @since 0.1.0
 */
import { Context, Data } from "effect"
import type { Effect } from "effect"
import type { AttemptRecord } from "../upstream/AttemptRecord.ts"
import type { StoreUnavailable } from "./StoreUnavailable.ts"

/**
 * What to hold before an upstream call.
 *
 * @since 0.1.0
 */
export interface ReserveRequest {
  readonly keyId: string
  readonly workspaceId: string
  /** The worst-case cost of the request's plan, in nano-USD. `0n` holds nothing. */
  readonly amountNanos: bigint
  /** Whether every endpoint the plan may use is served with the workspace's own credential. */
  readonly byok: boolean
}

/**
 * An admitted hold, to be settled or released exactly once.
 *
 * @since 0.1.0
 */
export interface Reservation {
  readonly id: string
  readonly keyId: string
  readonly workspaceId: string
  readonly amountNanos: bigint
  readonly byok: boolean
  /** The spend lease the hold was admitted from, when a limited scope needed one. */
  readonly lease: string | null
}

/**
 * What the upstream call actually used and cost.
 *
 * @since 0.1.0
 */
export interface SettleRequest {
  readonly generationId: string
  readonly model: string
  readonly provider: string
  readonly promptTokens: number
  readonly totalTokens: number
  /** The actual cost in nano-USD. */
  readonly costNanos: bigint
  readonly isByok: boolean
  /** How long the request took, in milliseconds, as `GET /generation` reports it. */
  readonly latencyMs?: number | undefined
  /**
   * Input items the embeddings cache served (default 0). They cost nothing: `promptTokens`,
   * `totalTokens` and `costNanos` are the upstream's alone.
   */
  readonly cachedItems?: number | undefined
  /** The prompt tokens the cached items were billed for when first embedded (default 0). */
  readonly cachedTokens?: number | undefined
  /**
   * Every upstream call the request made, in order (empty when the cache answered it whole), as
   * `GET /generation` lists them; unrecorded when absent.
   */
  readonly attempts?: ReadonlyArray<AttemptRecord> | undefined
}

/**
 * A request that cost nothing and held nothing (the embeddings cache served every item): its
 * ledger row, at cost 0.
 *
 * @since 0.2.0
 */
export interface RecordRequest extends Omit<SettleRequest, "costNanos"> {
  readonly keyId: string
  readonly workspaceId: string
}

/**
 * The ledger row a settlement wrote (or found, when it was settled before).
 *
 * @since 0.1.0
 */
export interface Settlement {
  readonly generationId: string
  /** What was charged: the actual cost, unless `capped`. Report this as `usage.cost`. */
  readonly costNanos: bigint
  /** True when the actual cost exceeded what the hold and the remaining room allowed. */
  readonly capped: boolean
  /** True when this call found an earlier settlement of the same generation id. */
  readonly duplicate: boolean
}

/**
 * A workspace's credits, as `GET /credits` reports them.
 *
 * @since 0.1.0
 */
export interface CreditTotals {
  readonly workspaceId: string
  /** Every credit ever added to the workspace. */
  readonly totalCreditsNanos: bigint
  /** Every non-BYOK cost ever charged to the workspace (the ledger's sum). */
  readonly totalUsageNanos: bigint
  /** What open holds keep back right now. */
  readonly heldNanos: bigint
}

/**
 * An operator's grant of credits to a workspace.
 *
 * @since 0.1.0
 */
export interface AddCreditsRequest {
  readonly workspaceId: string
  readonly amountNanos: bigint
  readonly note: string | null
  readonly grantedByKeyId: string | null
}

/**
 * Why the money port refused a request: a limit that cannot pay for it (402 at the edge), or a
 * key that stopped working between authentication and the hold (401 at the edge).
 *
 * @since 0.1.0
 */
export type RefusalReason =
  | "key_limit"
  | "workspace_budget"
  | "workspace_credits"
  | "key_disabled"
  | "key_deleted"
  | "key_expired"

/**
 * The money port's refusal, in the domain's terms; the edge gives it its status and envelope
 * (`errors/Refusal`).
 *
 * @since 0.3.0
 */
export class Refused extends Data.TaggedError("Refused")<{
  readonly reason: RefusalReason
  /** What the request may cost at most (0 for a record). */
  readonly requiredNanos: bigint
  /** The limit or budget that refused (key limit, workspace budget). */
  readonly limitNanos?: bigint | undefined
  /** What the refusing scope has left (never below 0). */
  readonly remainingNanos?: bigint | undefined
  /** The key limit's reset or the budget's interval. */
  readonly window?: string | null | undefined
}> {}

/**
 * @since 0.1.0
 */
export class Accounting extends Context.Service<Accounting, {
  /**
   * Holds `amountNanos` against the key's limit in its current window, the workspace's budgets
   * and (for a non-BYOK request in a workspace with prepaid credits) the workspace's balance.
   * Fails with `Refused` naming the scope that cannot pay (`key_limit`, `workspace_budget`,
   * `workspace_credits`) or the key that stopped working (`key_disabled`, `key_deleted`,
   * `key_expired`).
   */
  readonly reserve: (request: ReserveRequest) => Effect.Effect<Reservation, Refused | StoreUnavailable>
  /**
   * Charges the actual cost and writes the ledger row; succeeds once the row is durable.
   * Idempotent on `generationId`.
   */
  readonly settle: (reservation: Reservation, request: SettleRequest) => Effect.Effect<Settlement, StoreUnavailable>
  /**
   * Writes the ledger row of a request that cost nothing and needed no hold, after the checks
   * `reserve` makes at amount 0: `Refused` when the key stopped working, or when the key's limit,
   * a workspace budget or the workspace's credits are already spent beyond what they allow.
   * Charges nothing; idempotent on `generationId`. Durable before it succeeds, like `settle`.
   */
  readonly record: (request: RecordRequest) => Effect.Effect<Settlement, Refused | StoreUnavailable>
  /** Drops the hold without charging anything. Releasing twice is harmless. */
  readonly release: (reservation: Reservation) => Effect.Effect<void>
  readonly credits: (workspaceId: string) => Effect.Effect<CreditTotals, StoreUnavailable>
  /** Adds a positive amount to the workspace's credits and turns its prepaid credits on. */
  readonly addCredits: (request: AddCreditsRequest) => Effect.Effect<CreditTotals, StoreUnavailable>
}>()("@switchyard/core/store/Accounting") {}
