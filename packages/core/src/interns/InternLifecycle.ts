/**
 * The intern lifecycle as a pure state machine: which operation and which runtime event lead from
 * one status to the next.
 *
 * **Details**
 *
 * Two kinds of events drive an intern. Operations come from a caller (`Provision`, `Suspend`,
 * `Delete`); when the table has no entry for one, the operation is refused with `intern_busy`.
 * Runtime events report what the runtime really did (`StartAccepted`, `Progress`, `Ready`,
 * `Crashed`, `RuntimeStopped`, `Destroyed`...); when the table has no entry for one, the event is
 * stale and ignored.
 *
 * ```text
 * stopped ──Provision──▶ queued ──StartAccepted/Progress──▶ provisioning ──Ready──▶ running
 *    ▲                     │ StartRejected                    │ Crashed               │ Suspend
 *    │                     ▼                                  ▼                       ▼
 *    │                  failed ◀──────────────────────────────┴───── Crashed ─── stopped
 *    └──── Suspend ────────┘ (failed ──Provision──▶ queued)
 * any settled status ──Delete──▶ destroying ──Destroyed──▶ (removed)
 *                                       └──DestroyFailed──▶ destroy_failed ──Delete──▶ destroying
 * ```
 *
 * - A new intern is `stopped` with no disk: nothing runs until it is provisioned.
 * - Suspend is allowed from `running` (stops the runtime, keeps its disk and configuration),
 *   from `failed` (clears the failure, stops whatever is left) and from `stopped` (nothing to do,
 *   answers `suspended: true`). It is refused while `queued`, `provisioning`, `destroying`,
 *   `destroy_failed` and `awaiting_slack_install`. It is followed by `stopped`.
 * - Provision is allowed from `stopped` and `failed`: `queued`, then the runtime starts on the
 *   kept disk with the current configuration (`provisioning` with its steps), then `running`.
 * - `progress` is set exactly while `provisioning` ({@link startingProgress} until the runtime
 *   reports its first step); `lastFailureMessage` only while `failed` or `destroy_failed`.
 *
 * @since 0.1.0
 */
import type { InternProgress, InternStatus } from "../schema/Intern.ts"

/**
 * An operation a caller asks for.
 *
 * @since 0.1.0
 */
export type Operation = "Provision" | "Suspend" | "Delete"

/**
 * Everything that can move an intern: an operation, or a report of what the runtime did.
 *
 * @since 0.1.0
 */
export type LifecycleEvent =
  | { readonly _tag: "Provision" }
  | { readonly _tag: "Suspend" }
  | { readonly _tag: "Delete" }
  | { readonly _tag: "StartAccepted" }
  | { readonly _tag: "StartRejected"; readonly message: string }
  | { readonly _tag: "Progress"; readonly progress: InternProgress }
  | { readonly _tag: "Ready" }
  | { readonly _tag: "Crashed"; readonly message: string }
  | { readonly _tag: "RuntimeStopped" }
  | { readonly _tag: "Destroyed" }
  | { readonly _tag: "DestroyFailed"; readonly message: string }

/**
 * @since 0.1.0
 */
export type EventTag = LifecycleEvent["_tag"]

/**
 * Where an event leads: a status, or `removed` when the intern no longer exists.
 *
 * @since 0.1.0
 */
export type Target = InternStatus | "removed"

/**
 * The transition table. A missing entry means: operation refused (`intern_busy`), runtime event
 * ignored.
 *
 * @since 0.1.0
 */
export const transitions: { readonly [S in InternStatus]: { readonly [E in EventTag]?: Target } } = {
  awaiting_slack_install: {
    Delete: "destroying"
  },
  queued: {
    StartAccepted: "provisioning",
    StartRejected: "failed",
    Progress: "provisioning",
    Ready: "running",
    Crashed: "failed"
  },
  provisioning: {
    StartAccepted: "provisioning",
    Progress: "provisioning",
    Ready: "running",
    Crashed: "failed"
  },
  running: {
    StartAccepted: "running",
    Ready: "running",
    Crashed: "failed",
    Suspend: "stopped",
    RuntimeStopped: "stopped",
    Delete: "destroying"
  },
  failed: {
    Provision: "queued",
    Suspend: "stopped",
    Delete: "destroying"
  },
  stopped: {
    Provision: "queued",
    Suspend: "stopped",
    RuntimeStopped: "stopped",
    Delete: "destroying"
  },
  destroying: {
    Destroyed: "removed",
    DestroyFailed: "destroy_failed",
    RuntimeStopped: "destroying",
    Crashed: "destroying"
  },
  destroy_failed: {
    Delete: "destroying"
  }
}

/**
 * The part of an intern the lifecycle decides.
 *
 * @since 0.1.0
 */
export interface LifecycleState {
  readonly status: InternStatus
  readonly progress: InternProgress | null
  readonly lastFailureMessage: string | null
}

/**
 * The outcome of one event: the next state, the intern's removal, or no entry in the table.
 *
 * @since 0.1.0
 */
export type Outcome =
  | { readonly _tag: "Next"; readonly state: LifecycleState }
  | { readonly _tag: "Removed" }
  | { readonly _tag: "Refused" }

/**
 * Whether an operation is allowed from a status.
 *
 * @since 0.1.0
 */
export const allows = (status: InternStatus, operation: Operation): boolean =>
  transitions[status][operation] !== undefined

/**
 * Where a passing status ends when nothing goes wrong: a start ends `running`, a destruction
 * removes the intern. Settled statuses are absent: they change only when someone asks.
 *
 * @since 0.1.0
 */
const settlesTo: { readonly [S in InternStatus]?: Target } = {
  queued: "running",
  provisioning: "running",
  destroying: "removed"
}

/**
 * Whether waiting can make a refused operation possible: the intern is passing through a status
 * and the status it settles in allows the operation (suspend while provisioning: yes, once it
 * runs; provision while provisioning: no, it will be running; anything while destroying: no, it
 * will be gone; anything from a settled status: no).
 *
 * @since 0.1.0
 */
export const retryable = (status: InternStatus, operation: Operation): boolean => {
  const next = settlesTo[status]
  return next !== undefined && next !== "removed" && allows(next, operation)
}

/**
 * The progress of a run the runtime accepted but whose first step it has not reported yet, so
 * that `progress` is never `null` while `provisioning`. `total_steps` 0 means not known yet.
 *
 * @since 0.1.0
 */
export const startingProgress: InternProgress = { step_label: "Starting", step_number: 0, total_steps: 0 }

/**
 * Applies one event to a state.
 *
 * **Details**
 *
 * `progress` follows `Progress` events while provisioning ({@link startingProgress} before the
 * first one) and is cleared in every other status.
 * `lastFailureMessage` is the message of the event that led to `failed` or `destroy_failed`, and
 * is cleared in every other status.
 *
 * @since 0.1.0
 */
export const apply = (state: LifecycleState, event: LifecycleEvent): Outcome => {
  const target = transitions[state.status][event._tag]
  if (target === undefined) return { _tag: "Refused" }
  if (target === "removed") return { _tag: "Removed" }
  const progress = target !== "provisioning"
    ? null
    : event._tag === "Progress"
    ? event.progress
    : state.status === "provisioning"
    ? state.progress ?? startingProgress
    : startingProgress
  const lastFailureMessage = target !== "failed" && target !== "destroy_failed"
    ? null
    : "message" in event
    ? event.message
    : state.lastFailureMessage
  return { _tag: "Next", state: { status: target, progress, lastFailureMessage } }
}

/**
 * What the runtime reports of an intern when asked directly (at start-up, to reconcile).
 *
 * @since 0.1.0
 */
export type Observed =
  | { readonly _tag: "Absent" }
  | { readonly _tag: "Stopped" }
  | { readonly _tag: "Starting"; readonly progress: InternProgress | null }
  | { readonly _tag: "Running" }
  | { readonly _tag: "Failed"; readonly message: string }

/**
 * What reconciling asks the runtime to do so that it matches the stored intent.
 *
 * @since 0.1.0
 */
export type ReconcileAction = "none" | "start" | "stop" | "destroy"

/**
 * The state to store and the action to take when the stored status and the runtime disagree.
 *
 * **Details**
 *
 * The stored status is the intent and the runtime is the truth:
 *
 * - meant to be up (`queued`, `provisioning`, `running`): a running runtime makes it `running`,
 *   a starting one `provisioning`, a failed one `failed` with the runtime's message; a runtime
 *   that is not there is started again (`queued`, action `start`), as after a gateway restart.
 * - meant to be down (`stopped`, `failed`, `destroy_failed`, `awaiting_slack_install`): a runtime
 *   still going is stopped; the status stays.
 * - `destroying`: the destruction is resumed.
 *
 * @since 0.1.0
 */
export const reconcile = (
  state: LifecycleState,
  observed: Observed
): { readonly state: LifecycleState; readonly action: ReconcileAction } => {
  switch (state.status) {
    case "queued":
    case "provisioning":
    case "running":
      return reconcileUp(observed)
    case "destroying":
      return { state: settled("destroying"), action: "destroy" }
    case "stopped":
    case "failed":
    case "destroy_failed":
    case "awaiting_slack_install":
      return {
        state,
        action: observed._tag === "Running" || observed._tag === "Starting" ? "stop" : "none"
      }
  }
}

const settled = (status: InternStatus, extra?: Partial<LifecycleState>): LifecycleState => ({
  status,
  progress: null,
  lastFailureMessage: null,
  ...extra
})

const reconcileUp = (observed: Observed): { readonly state: LifecycleState; readonly action: ReconcileAction } => {
  switch (observed._tag) {
    case "Running":
      return { state: settled("running"), action: "none" }
    case "Starting":
      return { state: settled("provisioning", { progress: observed.progress ?? startingProgress }), action: "none" }
    case "Failed":
      return { state: settled("failed", { lastFailureMessage: observed.message }), action: "none" }
    case "Absent":
    case "Stopped":
      return { state: settled("queued"), action: "start" }
  }
}
