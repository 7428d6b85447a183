/**
 * The port through which the control plane runs interns: start one on its disk, stop it keeping
 * the disk, destroy it, ask what it is doing, and hear what it does on its own.
 *
 * **Details**
 *
 * A driver implements this port: the server ships a `process` driver (each intern a supervised
 * local process with its own data directory) and an `http` driver (an external orchestrator).
 * Every start carries a fresh `runId`; every event names the run it belongs to, so the control
 * plane can drop events of an earlier run (a late exit after a suspend and a new provision).
 *
 * **Gotchas**
 *
 * `stop` and `destroy` are idempotent: stopping an intern that is not running succeeds.
 * A call fails with {@link RuntimeUnavailable} when the runtime cannot be reached, does not answer
 * within the driver's time limit, or refuses the call; what a run does after it was accepted
 * (its steps, its readiness, a crash) is reported only through events.
 *
 * @since 0.1.0
 */
import { Context, Schema } from "effect"
import type { Effect, PubSub, Scope } from "effect"
import type { InternProgress } from "../schema/Intern.ts"
import type { Observed } from "./InternLifecycle.ts"

/**
 * Everything a runtime needs to start an intern.
 *
 * @since 0.1.0
 */
export interface RuntimeSpec {
  readonly internId: string
  readonly runId: string
  readonly workspaceId: string
  readonly name: string
  /** The hostname given at the first provisioning; `null` the first time. */
  readonly hostname: string | null
  readonly instructions: string | null
  /** `null` runs the workspace default. */
  readonly model: string | null
  readonly vaultId: string
  readonly attachedVaultId: string | null
}

/**
 * What a runtime answers when it accepted a start.
 *
 * @since 0.1.0
 */
interface Started {
  readonly hostname: string
}

/**
 * What a runtime reports on its own, for one run of one intern.
 *
 * @since 0.1.0
 */
export type RuntimeEvent =
  | { readonly _tag: "Progress"; readonly internId: string; readonly runId: string; readonly progress: InternProgress }
  | { readonly _tag: "Ready"; readonly internId: string; readonly runId: string }
  | { readonly _tag: "Crashed"; readonly internId: string; readonly runId: string; readonly message: string }
  | { readonly _tag: "RuntimeStopped"; readonly internId: string; readonly runId: string }

/**
 * The runtime could not be reached (or did not answer within its time limit).
 *
 * @since 0.1.0
 */
export class RuntimeUnavailable extends Schema.TaggedError<RuntimeUnavailable>()("RuntimeUnavailable", {
  message: Schema.String
}) {}

/**
 * @since 0.1.0
 */
export interface InternRuntimeShape {
  /** The driver's name, for logs (`process`, `http`). */
  readonly driver: string
  /** Starts a run on the intern's disk (created the first time); returns once the runtime accepted it. */
  readonly start: (spec: RuntimeSpec) => Effect.Effect<Started, RuntimeUnavailable>
  /** Stops the intern's runtime and waits until it is gone; keeps its disk and configuration. */
  readonly stop: (internId: string) => Effect.Effect<void, RuntimeUnavailable>
  /** Stops the intern's runtime and erases its disk. */
  readonly destroy: (internId: string) => Effect.Effect<void, RuntimeUnavailable>
  /** What the runtime is doing with the intern right now. */
  readonly inspect: (internId: string) => Effect.Effect<Observed, RuntimeUnavailable>
  /** Subscribes to the events of every intern; events published before the subscription are not seen. */
  readonly subscribe: Effect.Effect<PubSub.Subscription<RuntimeEvent>, never, Scope.Scope>
}

/**
 * The intern runtime in use.
 *
 * @since 0.1.0
 */
export class InternRuntime extends Context.Service<InternRuntime, InternRuntimeShape>()(
  "@switchyard/core/interns/InternRuntime"
) {}
