import { Layer } from "effect"
import { InternPolicyLive, InternsHandlers } from "../handlers/Interns.ts"
import * as InternRepo from "../store/InternRepo.ts"
import * as InternControl from "./InternControl.ts"
import * as InternRuntimeLive from "./InternRuntimeLive.ts"
import * as Reconcile from "./Reconcile.ts"

/**
 * Everything the intern endpoints need: handlers, request policy, control plane, runtime driver,
 * store, and start-up reconciliation. Requires the `SqlClient`.
 */
export const layer = Layer.mergeAll(InternsHandlers.pipe(Layer.provide(InternPolicyLive)), Reconcile.layer()).pipe(
  Layer.provideMerge(InternControl.layer),
  Layer.provide(InternRuntimeLive.layer),
  Layer.provideMerge(InternRepo.layer)
)
