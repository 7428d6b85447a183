import {
  ForeignWorkspace,
  type InternBusy,
  type InternNotFound,
  InvalidBody,
  type NameTaken,
  type UpstreamUnavailable
} from "@switchyard/core/errors/InternError"
import * as InternLifecycle from "@switchyard/core/interns/InternLifecycle"
import type { RuntimeUnavailable } from "@switchyard/core/interns/InternRuntime"
import type { StoredIntern } from "@switchyard/core/interns/InternStore"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import {
  type CreateInternBody,
  defaultPageSize,
  type InternList,
  type InternRecord,
  type InternStatus,
  toRecord,
  type UpdateInternBody
} from "@switchyard/core/schema/Intern"
import { Clock, Context, Effect, FiberSet, Layer, Option } from "effect"
import type { AuditDraft } from "../store/audit/AuditLog.ts"
import {
  advance,
  busy,
  destroy,
  followReports,
  makePlane,
  notVisible,
  now,
  type Plane,
  type Requester,
  provisionById,
  reconcile,
  repairAfterStop,
  statusChange,
  unavailable,
  uuidv7,
  visible,
  whole
} from "./InternRuns.ts"

export interface ListOptions {
  readonly limit?: number
  readonly starting_after?: string
  readonly status?: ReadonlyArray<InternStatus>
  readonly workspace_id?: string
}

/**
 * The control plane of interns: the operations callers ask for, the runtime's events applied
 * through the lifecycle table, and reconciliation with the runtime's real state.
 *
 * Every change a caller asks for that the store accepts (create, settings, provision, suspend,
 * delete) appends one audit entry in the transaction of the store write that records it: the
 * insert, the settings' update, or the status transition the operation makes (`queued`,
 * `stopped`, `destroying`). The runtime calls around those writes run outside any transaction.
 * What the runtime reports afterwards, and reconciliation, are the gateway's own doing and are
 * not recorded.
 */
export class InternControl extends Context.Service<InternControl, {
  readonly create: (
    who: Requester,
    body: CreateInternBody
  ) => Effect.Effect<InternRecord, InvalidBody | ForeignWorkspace | NameTaken | StoreUnavailable>
  readonly get: (who: Requester, id: string) => Effect.Effect<InternRecord, InternNotFound | StoreUnavailable>
  readonly list: (who: Requester, options: ListOptions) => Effect.Effect<InternList, ForeignWorkspace | StoreUnavailable>
  readonly update: (
    who: Requester,
    id: string,
    body: UpdateInternBody
  ) => Effect.Effect<InternRecord, InternNotFound | NameTaken | StoreUnavailable>
  readonly provision: (who: Requester, id: string) => Effect.Effect<void, InternNotFound | InternBusy | UpstreamUnavailable | StoreUnavailable>
  readonly suspend: (who: Requester, id: string) => Effect.Effect<void, InternNotFound | InternBusy | UpstreamUnavailable | StoreUnavailable>
  readonly remove: (
    who: Requester,
    id: string,
    acknowledgeWorkspaceLoss: boolean
  ) => Effect.Effect<void, InvalidBody | InternNotFound | InternBusy | StoreUnavailable>
  /** Brings one intern's stored status in line with its runtime (see `InternLifecycle.reconcile`). */
  readonly reconcile: (id: string) => Effect.Effect<InternLifecycle.ReconcileAction, RuntimeUnavailable | StoreUnavailable>
}>()("@switchyard/server/interns/InternControl") {
  /**
   * The control plane over the intern store, the runtime and the audit log: the callers' requests
   * below over the runs of `InternRuns.ts`; it applies the runtime's reports from the start.
   */
  static readonly layer = Layer.effect(
    InternControl,
    Effect.gen(function*() {
      const plane = yield* makePlane
      yield* followReports(plane)
      return InternControl.of({
        create: create(plane),
        get: (who, id) => Effect.map(visible(plane, who, id), toRecord),
        list: list(plane),
        update: update(plane),
        provision: (who, id) => whole(plane, id)(provisionById(plane, id, who, statusChange("intern.provision"))),
        suspend: suspend(plane),
        remove: remove(plane),
        reconcile: (id) => reconcile(plane, id)
      })
    })
  )
}

// ---------------------------------------------------------------------------------------------
// The callers' requests
// ---------------------------------------------------------------------------------------------

// What an audit entry shows of an intern: its settings and its status.
const settingsOf = (intern: StoredIntern) => ({
  name: intern.name,
  description: intern.description,
  instructions: intern.instructions,
  model: intern.model
})

const create = (plane: Plane) =>
  Effect.fn("InternControl.create")(function*(who: Requester, body: CreateInternBody) {
    const { audit, store } = plane
    if (body.workspace_id !== undefined && body.workspace_id.toLowerCase() !== who.workspaceId) {
      return yield* new ForeignWorkspace({
        message: `This key selects workspace ${who.workspaceId}; it cannot create interns in ${body.workspace_id}`
      })
    }
    let attachedVaultId: string | null = null
    if (body.vault_id !== undefined) {
      const owner = yield* store.findByVault(who.workspaceId, body.vault_id)
      if (Option.isNone(owner)) {
        return yield* new InvalidBody({ message: `vault_id: no vault '${body.vault_id}' in this workspace` })
      }
      attachedVaultId = body.vault_id
    }
    const created = yield* audit.recorded(
      store.insert({
        id: uuidv7(yield* Clock.currentTimeMillis),
        workspaceId: who.workspaceId,
        creatorUserId: who.userId,
        name: body.name,
        description: body.description ?? null,
        instructions: body.instructions ?? null,
        model: body.model ?? null,
        attachedVaultId,
        now: yield* now
      }),
      (intern): AuditDraft => ({
        action: "intern.create",
        target: { type: "intern", id: intern.id },
        workspaceId: intern.workspaceId,
        after: {
          ...settingsOf(intern),
          ...(attachedVaultId !== null ? { vault_id: attachedVaultId } : {}),
          ...(body.provision === true ? { provision: true } : {})
        }
      })
    )
    if (body.provision !== true) return toRecord(created)
    yield* whole(plane, created.id)(provisionById(plane, created.id, who)).pipe(
      Effect.catchTags({ UpstreamUnavailable: () => Effect.void, InternBusy: () => Effect.void }),
      Effect.catchTag("InternNotFound", Effect.die)
    )
    // Just created in the caller's workspace: not finding it is a bug, not a client's mistake.
    return toRecord(yield* visible(plane, who, created.id).pipe(Effect.catchTag("InternNotFound", Effect.die)))
  })

const list = (plane: Plane) =>
  Effect.fn("InternControl.list")(function*(who: Requester, options: ListOptions) {
    if (options.workspace_id !== undefined && options.workspace_id.toLowerCase() !== who.workspaceId) {
      return yield* new ForeignWorkspace({
        message: `This key selects workspace ${who.workspaceId}; it cannot list interns of ${options.workspace_id}`
      })
    }
    const limit = options.limit ?? defaultPageSize
    const rows = yield* plane.store.list({
      workspaceId: who.workspaceId,
      statuses: options.status ?? [],
      after: options.starting_after,
      limit: limit + 1
    })
    const page = rows.slice(0, limit)
    const hasMore = rows.length > limit
    return {
      data: page.map(toRecord),
      has_more: hasMore,
      ...(hasMore ? { next_cursor: page.at(-1)!.id } : {})
    } satisfies InternList
  })

const update = (plane: Plane) =>
  Effect.fn("InternControl.update")(function*(who: Requester, id: string, body: UpdateInternBody) {
    if (Object.keys(body).length === 0) return toRecord(yield* visible(plane, who, id))
    const changed = yield* plane.audit.recorded(
      Effect.gen(function*() {
        const before = yield* visible(plane, who, id)
        const after = yield* plane.store.updateSettings(id, body, yield* now)
        return Option.map(after, (one) => ({ before, after: one }))
      }),
      Option.match({
        onNone: () => undefined,
        onSome: ({ after, before }): AuditDraft => ({
          action: "intern.update",
          target: { type: "intern", id: after.id },
          workspaceId: after.workspaceId,
          before: settingsOf(before),
          after: settingsOf(after)
        })
      })
    )
    return toRecord(yield* Option.match(changed, {
      onNone: () => Effect.fail(notVisible(id)),
      onSome: ({ after }) => Effect.succeed(after)
    }))
  })

const suspend = (plane: Plane) => (who: Requester, id: string) =>
  whole(plane, id)(Effect.gen(function*() {
    const intern = yield* visible(plane, who, id)
    if (!InternLifecycle.allows(intern.status, "Suspend")) return yield* busy(intern.status, "Suspend")
    yield* plane.runtime.stop(id).pipe(
      Effect.tapError(() => Effect.forkIn(repairAfterStop(plane, id), plane.backgroundScope)),
      Effect.mapError(unavailable)
    )
    // The runtime's own report of the stop may have moved the intern to `stopped` already:
    // the change recorded is from the status the request found.
    const result = yield* advance(plane, id, { _tag: "Suspend" }, {
      record: (_, after) => statusChange("intern.suspend")(intern, after)
    })
    if (result._tag === "Refused") return yield* busy(result.intern.status, "Suspend")
    if (result._tag === "Gone") return yield* notVisible(id)
  }))

const remove = (plane: Plane) => (who: Requester, id: string, acknowledgeWorkspaceLoss: boolean) =>
  whole(plane, id)(Effect.gen(function*() {
    const intern = yield* visible(plane, who, id)
    if (!InternLifecycle.allows(intern.status, "Delete")) return yield* busy(intern.status, "Delete")
    if (intern.vaultId !== null && !acknowledgeWorkspaceLoss) {
      return yield* new InvalidBody({
        message: "acknowledge_workspace_loss: deleting this intern erases its disk; send acknowledge_workspace_loss: true"
      })
    }
    const result = yield* advance(plane, id, { _tag: "Delete" }, {
      record: (before, after) => ({
        action: "intern.delete",
        target: { type: "intern", id: after.id },
        workspaceId: after.workspaceId,
        before: { ...settingsOf(before), status: before.status },
        after: { status: after.status }
      })
    })
    if (result._tag === "Refused") return yield* busy(result.intern.status, "Delete")
    if (result._tag === "Applied") yield* FiberSet.run(plane.background, destroy(plane, id))
  }))
