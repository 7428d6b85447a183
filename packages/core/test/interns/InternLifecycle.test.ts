import { assert, describe, it } from "@effect/vitest"
import * as fc from "fast-check"
import {
  allows,
  apply,
  type LifecycleEvent,
  type LifecycleState,
  type Observed,
  reconcile,
  retryable,
  startingProgress,
  transitions
} from "../../src/interns/InternLifecycle.ts"
import { type InternStatus, statuses } from "../../src/schema/Intern.ts"

const at = (status: InternStatus, extra: Partial<LifecycleState> = {}): LifecycleState => ({
  status,
  progress: null,
  lastFailureMessage: null,
  ...extra
})

const step = { step_label: "Preparing disk", step_number: 1, total_steps: 4 }

const next = (state: LifecycleState, event: LifecycleEvent) => {
  const outcome = apply(state, event)
  return outcome._tag === "Next" ? outcome.state : outcome._tag
}

describe("InternLifecycle", () => {
  it("has a row for each of the eight statuses", () => {
    assert.deepStrictEqual(Object.keys(transitions).sort(), [...statuses].sort())
  })

  it("allows suspend from running, failed and stopped only, and always lands in stopped", () => {
    const allowed = statuses.filter((s) => allows(s, "Suspend"))
    assert.deepStrictEqual(allowed.sort(), ["failed", "running", "stopped"])
    for (const s of allowed) assert.strictEqual(transitions[s].Suspend, "stopped")
  })

  it("provisions from stopped and failed into queued, then provisioning, then running", () => {
    assert.deepStrictEqual(statuses.filter((s) => allows(s, "Provision")).sort(), ["failed", "stopped"])
    let state = at("stopped")
    state = next(state, { _tag: "Provision" }) as LifecycleState
    assert.strictEqual(state.status, "queued")
    state = next(state, { _tag: "StartAccepted" }) as LifecycleState
    assert.strictEqual(state.status, "provisioning")
    state = next(state, { _tag: "Progress", progress: step }) as LifecycleState
    assert.deepStrictEqual(state, at("provisioning", { progress: step }))
    state = next(state, { _tag: "Ready" }) as LifecycleState
    assert.deepStrictEqual(state, at("running"))
  })

  it("gives a run the runtime accepted a starting progress until its first step", () => {
    const accepted = next(at("queued"), { _tag: "StartAccepted" }) as LifecycleState
    assert.deepStrictEqual(accepted, at("provisioning", { progress: startingProgress }))
    assert.deepStrictEqual(next(accepted, { _tag: "Progress", progress: step }), at("provisioning", { progress: step }))
    assert.deepStrictEqual(next(at("provisioning", { progress: step }), { _tag: "StartAccepted" }), at("provisioning", { progress: step }))
    assert.deepStrictEqual(
      reconcile(at("running"), { _tag: "Starting", progress: null }).state,
      at("provisioning", { progress: startingProgress })
    )
  })

  it("calls intern_busy retryable only when waiting can make the operation possible", () => {
    const yes = statuses.flatMap((s) => (["Provision", "Suspend", "Delete"] as const).filter((o) => retryable(s, o)).map((o) => `${o} while ${s}`))
    assert.deepStrictEqual(yes.sort(), [
      "Delete while provisioning",
      "Delete while queued",
      "Suspend while provisioning",
      "Suspend while queued"
    ])
    for (const s of statuses) {
      for (const o of ["Provision", "Suspend", "Delete"] as const) {
        if (retryable(s, o)) assert.isFalse(allows(s, o), `${o} is allowed from ${s}: nothing to wait for`)
      }
    }
  })

  it("refuses suspend and provision while queued or provisioning", () => {
    for (const s of ["queued", "provisioning"] as const) {
      assert.strictEqual(apply(at(s), { _tag: "Suspend" })._tag, "Refused")
      assert.strictEqual(apply(at(s), { _tag: "Provision" })._tag, "Refused")
      assert.strictEqual(apply(at(s), { _tag: "Delete" })._tag, "Refused")
    }
    assert.strictEqual(apply(at("running"), { _tag: "Provision" })._tag, "Refused")
  })

  it("records why provisioning failed and clears it on the next provision", () => {
    const failed = next(at("provisioning", { progress: step }), { _tag: "Crashed", message: "exit 1: disk full" })
    assert.deepStrictEqual(failed, at("failed", { lastFailureMessage: "exit 1: disk full" }))
    assert.deepStrictEqual(next(failed as LifecycleState, { _tag: "Provision" }), at("queued"))
    assert.deepStrictEqual(
      next(at("queued"), { _tag: "StartRejected", message: "unreachable" }),
      at("failed", { lastFailureMessage: "unreachable" })
    )
  })

  it("deletes from every settled status and removes once destroyed", () => {
    assert.deepStrictEqual(
      statuses.filter((s) => allows(s, "Delete")).sort(),
      ["awaiting_slack_install", "destroy_failed", "failed", "running", "stopped"]
    )
    assert.strictEqual(next(at("destroying"), { _tag: "Destroyed" }), "Removed")
    assert.deepStrictEqual(
      next(at("destroying"), { _tag: "DestroyFailed", message: "busy" }),
      at("destroy_failed", { lastFailureMessage: "busy" })
    )
  })

  it("ignores runtime events that do not fit the status", () => {
    assert.strictEqual(apply(at("stopped"), { _tag: "Ready" })._tag, "Refused")
    assert.strictEqual(apply(at("stopped"), { _tag: "Crashed", message: "late" })._tag, "Refused")
    assert.strictEqual(apply(at("failed"), { _tag: "Progress", progress: step })._tag, "Refused")
  })

  const event: fc.Arbitrary<LifecycleEvent> = fc.oneof(
    fc.constantFrom<LifecycleEvent>(
      { _tag: "Provision" },
      { _tag: "Suspend" },
      { _tag: "Delete" },
      { _tag: "StartAccepted" },
      { _tag: "Ready" },
      { _tag: "RuntimeStopped" },
      { _tag: "Destroyed" }
    ),
    fc.string().map((message): LifecycleEvent => ({ _tag: "Crashed", message })),
    fc.string().map((message): LifecycleEvent => ({ _tag: "StartRejected", message })),
    fc.string().map((message): LifecycleEvent => ({ _tag: "DestroyFailed", message })),
    fc.nat(9).map((n): LifecycleEvent => ({ _tag: "Progress", progress: { ...step, step_number: n } }))
  )

  it("has progress exactly while provisioning and a failure message only while failed", () => {
    fc.assert(fc.property(fc.constantFrom(...statuses), fc.array(event, { maxLength: 30 }), (initial, events) => {
      let state = at(initial, initial === "provisioning" ? { progress: step } : {})
      for (const e of events) {
        const outcome = apply(state, e)
        if (outcome._tag === "Removed") return true
        if (outcome._tag === "Refused") continue
        state = outcome.state
        if ((state.progress !== null) !== (state.status === "provisioning")) return false
        if (state.lastFailureMessage !== null && state.status !== "failed" && state.status !== "destroy_failed") {
          return false
        }
      }
      return true
    }))
  })

  describe("reconcile", () => {
    const observed: Record<Observed["_tag"], Observed> = {
      Absent: { _tag: "Absent" },
      Stopped: { _tag: "Stopped" },
      Starting: { _tag: "Starting", progress: step },
      Running: { _tag: "Running" },
      Failed: { _tag: "Failed", message: "oom" }
    }

    it("starts again an intern meant to be up whose runtime is gone", () => {
      for (const s of ["queued", "provisioning", "running"] as const) {
        assert.deepStrictEqual(reconcile(at(s), observed.Stopped), { state: at("queued"), action: "start" })
        assert.deepStrictEqual(reconcile(at(s), observed.Absent), { state: at("queued"), action: "start" })
      }
    })

    it("takes the runtime's word when it is up, starting or failed", () => {
      assert.deepStrictEqual(reconcile(at("provisioning"), observed.Running), { state: at("running"), action: "none" })
      assert.deepStrictEqual(reconcile(at("running"), observed.Starting), {
        state: at("provisioning", { progress: step }),
        action: "none"
      })
      assert.deepStrictEqual(reconcile(at("running"), observed.Failed), {
        state: at("failed", { lastFailureMessage: "oom" }),
        action: "none"
      })
    })

    it("stops a runtime still going for an intern meant to be down, and resumes destruction", () => {
      assert.deepStrictEqual(reconcile(at("stopped"), observed.Running), { state: at("stopped"), action: "stop" })
      assert.deepStrictEqual(reconcile(at("stopped"), observed.Stopped), { state: at("stopped"), action: "none" })
      assert.strictEqual(reconcile(at("destroying"), observed.Running).action, "destroy")
    })
  })
})
