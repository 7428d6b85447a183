/**
 * An intern's runs under the control plane (`InternControl.ts`): the state its parts share, the
 * compare-and-set writes through the lifecycle table, runs started and destroyed, the runtime's
 * reports applied, and reconciliation with the runtime's real state when an outcome is unknown.
 */
import { InternBusy, InternNotFound, UpstreamUnavailable } from "@switchyard/core/errors/InternError"
import * as InternLifecycle from "@switchyard/core/interns/InternLifecycle"
import { InternRuntime, type RuntimeEvent, type RuntimeUnavailable } from "@switchyard/core/interns/InternRuntime"
import { type Change, InternStore, type StoredIntern } from "@switchyard/core/interns/InternStore"
import { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { type InternStatus, statuses } from "@switchyard/core/schema/Intern"
import { Cause, Clock, Effect, Fiber, FiberSet, Option, PubSub, Schedule, type Scope, Semaphore } from "effect"
import * as Crypto from "node:crypto"
import { type AuditDraft, AuditLog } from "../store/audit/AuditLog.ts"

/**
 * Who asks: the key's user and the workspace it selects.
 */
export interface Requester {
  readonly userId: string
  readonly workspaceId: string
}

/**
 * A UUIDv7: ids sort by creation time, which keeps cursor paging stable.
 */
export const uuidv7 = (ms: number): string => {
  const bytes = Crypto.randomBytes(16)
  bytes.writeUIntBE(ms, 0, 6)
  bytes[6] = (bytes[6]! & 0x0f) | 0x70
  bytes[8] = (bytes[8]! & 0x3f) | 0x80
  const hex = bytes.toString("hex")
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

const allowedFrom = (operation: InternLifecycle.Operation) =>
  statuses.filter((s) => InternLifecycle.allows(s, operation)).join(", ")

export const busy = (status: InternStatus, operation: InternLifecycle.Operation) =>
  new InternBusy({
    message: `The intern is ${status}; ${operation.toLowerCase()} is allowed when it is ${allowedFrom(operation)}`,
    metadata: { reason: status, retryable: InternLifecycle.retryable(status, operation) }
  })

export const unavailable = (error: RuntimeUnavailable) =>
  new UpstreamUnavailable({
    message: `${error.message}. The request may be retried.`,
    metadata: { reason: "runtime_unavailable", retryable: true }
  })

const toLifecycleEvent = (event: RuntimeEvent): InternLifecycle.LifecycleEvent => {
  switch (event._tag) {
    case "Progress":
      return { _tag: "Progress", progress: event.progress }
    case "Ready":
      return { _tag: "Ready" }
    case "Crashed":
      return { _tag: "Crashed", message: event.message }
    case "RuntimeStopped":
      return { _tag: "RuntimeStopped" }
  }
}

// A status change; none when the operation had nothing to do (suspending a stopped intern).
export const statusChange = (action: string) => (before: StoredIntern, after: StoredIntern): AuditDraft | undefined =>
  before.status === after.status ? undefined : {
    action,
    target: { type: "intern", id: after.id },
    workspaceId: after.workspaceId,
    before: { status: before.status },
    after: { status: after.status }
  }

type Recorder = (before: StoredIntern, after: StoredIntern) => AuditDraft | undefined

const storeFailed = <E>(cause: Cause.Cause<E>) =>
  Cause.findErrorOption(cause).pipe(Option.exists((e) => e instanceof StoreUnavailable))

type Advanced =
  | { readonly _tag: "Applied"; readonly intern: StoredIntern }
  | { readonly _tag: "Refused"; readonly intern: StoredIntern }
  | { readonly _tag: "Gone" }
  | { readonly _tag: "Stale" }

/**
 * What the control plane's parts share: the store, the runtime, the audit log, one lock per intern,
 * and the plane's own scope, where operations and repairs run to the end whatever happens to the
 * request that asked for them.
 */
export interface Plane {
  readonly store: InternStore["Service"]
  readonly runtime: InternRuntime["Service"]
  readonly audit: AuditLog["Service"]
  readonly background: FiberSet.FiberSet
  readonly backgroundScope: Scope.Scope
  readonly locks: Map<string, Semaphore.Semaphore>
}

export const makePlane = Effect.gen(function*() {
  const plane: Plane = {
    store: yield* InternStore,
    runtime: yield* InternRuntime,
    audit: yield* AuditLog,
    background: yield* FiberSet.make(),
    backgroundScope: yield* Effect.scope,
    locks: new Map()
  }
  return plane
})

export const now = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms))

export const notVisible = (id: string) => new InternNotFound({ message: `No intern '${id}' is visible to this key` })

// ---------------------------------------------------------------------------------------------
// Locks, the plane's scope, and the store writes every operation goes through
// ---------------------------------------------------------------------------------------------

const locked = (plane: Plane, id: string) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    let lock = plane.locks.get(id)
    if (lock === undefined) {
      lock = Semaphore.makeUnsafe(1)
      plane.locks.set(id, lock)
    }
    return lock.withPermits(1)(effect)
  })

// An operation's runtime call and its state write run to the end together in the control
// plane's own scope, whatever happens to the request that asked for them (its time limit, a
// closed connection): the request only waits for the outcome. An operation that dies half-way,
// or whose store stopped answering half-way, has the intern reconciled with its runtime.
export const whole = (plane: Plane, id: string) => <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  FiberSet.run(plane.background, locked(plane, id)(effect).pipe(
    Effect.onError((cause) =>
      Cause.hasDies(cause) || storeFailed(cause) ? Effect.forkIn(repair(plane, id), plane.backgroundScope) : Effect.void
    )
  )).pipe(Effect.flatMap(Fiber.join))

export const visible = (plane: Plane, who: Requester, id: string) =>
  plane.store.findInWorkspace(who.workspaceId, id).pipe(
    Effect.flatMap(Option.match({
      onNone: () => Effect.fail(notVisible(id)),
      onSome: Effect.succeed
    }))
  )

// A status write; with `record`, the caller's change, appended to the audit log in the write's
// transaction when the write took place (a compare-and-set that lost writes nothing, records nothing).
const transition = (
  plane: Plane,
  intern: StoredIntern,
  change: Change,
  record: Recorder | undefined
): Effect.Effect<Option.Option<StoredIntern>, StoreUnavailable> =>
  Effect.flatMap(now, (at) => {
    const write = plane.store.transition(intern.id, { status: intern.status, runId: intern.runId }, change, at)
    return record === undefined
      ? write
      : plane.audit.recorded(write, Option.match({ onNone: () => undefined, onSome: (after) => record(intern, after) }))
  })

// Applies an event through the lifecycle table with compare-and-set writes, re-reading when a
// concurrent write moved the intern first. With `runId`, events of another run are stale.
export const advance = (
  plane: Plane,
  id: string,
  event: InternLifecycle.LifecycleEvent,
  options: { readonly runId?: string; readonly extra?: Partial<Change>; readonly record?: Recorder } = {}
): Effect.Effect<Advanced, StoreUnavailable> =>
  Effect.gen(function*() {
    const { store } = plane
    for (let attempt = 0; attempt < 10; attempt++) {
      const found = yield* store.find(id)
      if (Option.isNone(found)) return { _tag: "Gone" }
      const intern = found.value
      if (options.runId !== undefined && intern.runId !== options.runId) return { _tag: "Stale" }
      const outcome = InternLifecycle.apply(intern, event)
      const expected = { status: intern.status, runId: intern.runId }
      if (outcome._tag === "Removed") {
        if (yield* store.remove(id, intern.status)) return { _tag: "Gone" }
        continue
      }
      if (outcome._tag === "Refused") {
        if (options.extra === undefined) return { _tag: "Refused", intern }
        const same = { status: intern.status, progress: intern.progress, lastFailureMessage: intern.lastFailureMessage }
        const kept = yield* store.transition(id, expected, { ...same, ...options.extra }, yield* now)
        if (Option.isSome(kept)) return { _tag: "Refused", intern: kept.value }
        continue
      }
      const written = yield* transition(plane, intern, { ...outcome.state, ...options.extra }, options.record)
      if (Option.isSome(written)) return { _tag: "Applied", intern: written.value }
    }
    return yield* Effect.die(new Error(`Intern ${id} kept changing while applying ${event._tag}`))
  })

// ---------------------------------------------------------------------------------------------
// Runs: provisioning starts one, deletion destroys the intern's
// ---------------------------------------------------------------------------------------------

// Starts a run on an intern that is `queued` with `runId`; a runtime that cannot be reached
// fails the attempt (status `failed`, with the reason).
const startRun = (plane: Plane, intern: StoredIntern, runId: string) =>
  plane.runtime.start({
    internId: intern.id,
    runId,
    workspaceId: intern.workspaceId,
    name: intern.name,
    hostname: intern.hostname,
    instructions: intern.instructions,
    model: intern.model,
    vaultId: intern.vaultId!,
    attachedVaultId: intern.attachedVaultId
  }).pipe(
    Effect.matchEffect({
      onFailure: (error) =>
        advance(plane, intern.id, { _tag: "StartRejected", message: error.message }, { runId }).pipe(
          Effect.andThen(Effect.forkIn(repair(plane, intern.id), plane.backgroundScope)),
          Effect.andThen(Effect.fail(unavailable(error)))
        ),
      onSuccess: (started) =>
        advance(plane, intern.id, { _tag: "StartAccepted" }, { runId, extra: { hostname: started.hostname } })
    }),
    Effect.asVoid
  )

// queued with a fresh run (and the vault id given at the first provisioning), then started.
const beginRun = (plane: Plane, intern: StoredIntern, state: InternLifecycle.LifecycleState, record?: Recorder) =>
  Effect.gen(function*() {
    const runId = uuidv7(yield* Clock.currentTimeMillis)
    const queued = yield* transition(
      plane,
      intern,
      { ...state, runId, vaultId: intern.vaultId ?? uuidv7(yield* Clock.currentTimeMillis) },
      record
    )
    if (Option.isNone(queued)) return false
    yield* startRun(plane, queued.value, runId)
    return true
  })

// `record`: the provisioning a caller asked for by itself (a create with `provision: true` is
// one change, recorded as the create).
export const provisionById = (plane: Plane, id: string, who: Requester, record?: Recorder) =>
  Effect.gen(function*() {
    for (let attempt = 0; attempt < 10; attempt++) {
      const intern = yield* visible(plane, who, id)
      const outcome = InternLifecycle.apply(intern, { _tag: "Provision" })
      if (outcome._tag !== "Next") return yield* busy(intern.status, "Provision")
      if (yield* beginRun(plane, intern, outcome.state, record)) return
    }
  })

export const destroy = (plane: Plane, id: string) =>
  plane.runtime.destroy(id).pipe(
    Effect.matchEffect({
      onFailure: (error) => advance(plane, id, { _tag: "DestroyFailed", message: error.message }),
      onSuccess: () => advance(plane, id, { _tag: "Destroyed" })
    }),
    Effect.asVoid
  )

// ---------------------------------------------------------------------------------------------
// The runtime's reports, reconciliation and repair
// ---------------------------------------------------------------------------------------------

// Every event the runtime reports, applied for as long as the plane lives.
export const followReports = (plane: Plane) =>
  Effect.gen(function*() {
    const subscription = yield* plane.runtime.subscribe
    const onEvent = (event: RuntimeEvent) =>
      advance(plane, event.internId, toLifecycleEvent(event), { runId: event.runId }).pipe(
        Effect.catchCause((cause) => Effect.logError("Applying an intern runtime event failed", event._tag, cause))
      )
    yield* PubSub.take(subscription).pipe(Effect.flatMap(onEvent), Effect.forever, Effect.forkScoped)
  })

export const reconcile = (plane: Plane, id: string) =>
  locked(plane, id)(Effect.gen(function*() {
    const { runtime, store } = plane
    const found = yield* store.find(id)
    if (Option.isNone(found)) return "none" as const
    const intern = found.value
    const observed = yield* runtime.inspect(id)
    const { action, state } = InternLifecycle.reconcile(intern, observed)
    switch (action) {
      case "start":
        yield* beginRun(plane, intern, state).pipe(Effect.catchTag("UpstreamUnavailable", () => Effect.void))
        break
      case "stop":
        yield* runtime.stop(id)
        break
      case "destroy":
        yield* FiberSet.run(plane.background, destroy(plane, id))
        break
      case "none":
        if (state.status !== intern.status || state.lastFailureMessage !== intern.lastFailureMessage) {
          yield* store.transition(id, { status: intern.status, runId: intern.runId }, state, yield* now)
        }
    }
    return action
  }))

// After a runtime call whose outcome is unknown (it died half-way, or the runtime did not answer
// in time but may still act), the intern is reconciled once the runtime answers again.
const repair = (plane: Plane, id: string): Effect.Effect<void> =>
  reconcile(plane, id).pipe(
    Effect.retry({ schedule: Schedule.exponential("1 second"), times: 5 }),
    Effect.catchCause((cause) => Effect.logWarning(`Could not reconcile intern ${id} with its runtime`, cause))
  )

// A stop the runtime did not confirm may still have happened: whatever it did is recorded as
// the runtime's own report, so a stopped runtime makes the intern stopped, not started again.
export const repairAfterStop = (plane: Plane, id: string): Effect.Effect<void> =>
  plane.runtime.inspect(id).pipe(
    Effect.flatMap((observed) =>
      observed._tag === "Stopped" || observed._tag === "Absent"
        ? advance(plane, id, { _tag: "RuntimeStopped" })
        : observed._tag === "Failed"
        ? advance(plane, id, { _tag: "Crashed", message: observed.message })
        : Effect.void
    ),
    Effect.retry({ schedule: Schedule.exponential("1 second"), times: 5 }),
    Effect.catchCause((cause) => Effect.logWarning(`Could not check intern ${id} with its runtime`, cause))
  )
