/**
 * Endpoints that need no key: health.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"

/**
 * One dependency's state in `/health`'s body: `up`, `down`, `off` (not configured) or, for the
 * disk, `low` (under its free-space floor) and `full` (too little left to write the ledger: the
 * store counts as down).
 *
 * @since 0.4.0
 */
const DependencyCheck = Schema.Struct({
  status: Schema.Literals(["up", "down", "off", "low", "full"]),
  /** The disk's free bytes under the embedded store's data directory. */
  free_bytes: Schema.optionalKey(Schema.Number)
})

/**
 * What `/health` checked: the store (a write, not only a read), Redis and the disk of the data
 * directory.
 *
 * @since 0.4.0
 */
export const HealthChecks = Schema.Struct({
  store: DependencyCheck,
  redis: DependencyCheck,
  disk: DependencyCheck,
  /**
   * The audit log's hash chain at this process's last check (`unchecked` before the first):
   * `broken` names the first entry found changed or missing, and makes the status `degraded`.
   */
  audit: Schema.optionalKey(Schema.Struct({
    status: Schema.Literals(["unchecked", "ok", "broken"]),
    first_broken: Schema.optionalKey(Schema.Struct({
      id: Schema.Int,
      reason: Schema.Literals(["hash_mismatch", "prev_hash_mismatch"])
    }))
  }))
})

/**
 * `GET /health`: 200 while this process can answer requests and write its ledger (`status: "ok"`,
 * or `"degraded"` while an optional dependency, Redis or the disk's free space, is not well, or the
 * audit log's chain is broken), with
 * each dependency's state in `checks`; 503 in the error envelope when the store cannot be written
 * or the process is shutting down (`metadata.reason`, `metadata.status: "unavailable"` and
 * `metadata.checks`), so a load balancer takes the replica out.
 *
 * @since 0.1.0
 */
export class SystemApi extends HttpApiGroup.make("system", { topLevel: true }).add(
  HttpApiEndpoint.get("health", "/health", {
    success: Schema.Struct({ status: Schema.Literals(["ok", "degraded"]), checks: HealthChecks }),
    error: wire[503]
  })
) {}
