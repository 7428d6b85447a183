/**
 * The audit log of management actions: read with filters and a cursor, and its hash chain checked.
 *
 * @since 0.1.0
 */
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { AuditList, AuditQuery, AuditVerification } from "../schema/Audit.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

/**
 * `GET /audit-log` (management keys: their workspace's entries; instance administrators: every
 * entry) and `GET /audit-log/verify` (instance administrators).
 *
 * @since 0.1.0
 */
export class AuditApi extends HttpApiGroup.make("audit")
  .add(
    HttpApiEndpoint.get("list", "/audit-log", { query: AuditQuery, success: AuditList, error: errors }),
    HttpApiEndpoint.get("verify", "/audit-log/verify", { success: AuditVerification, error: errors })
  )
  .middleware(Authorization)
{}
