/**
 * Who is calling, and the single sign-on sessions: `GET /me`, `GET /sessions`,
 * `DELETE /sessions/{id}` and `DELETE /sessions?user_id=`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import { Me, SessionList, SessionQuery, SessionsEnded } from "../schema/Session.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

/**
 * The sessions (instance administrators) and `GET /me` (any credential).
 *
 * @since 0.1.0
 */
export class SessionsApi extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.get("me", "/me", { success: Me, error: errors }),
    HttpApiEndpoint.get("list", "/sessions", { query: SessionQuery, success: SessionList, error: errors }),
    HttpApiEndpoint.delete("revoke", "/sessions/:id", {
      params: { id: Schema.String },
      success: SessionsEnded,
      error: errors
    }),
    HttpApiEndpoint.delete("revokeAll", "/sessions", { query: SessionQuery, success: SessionsEnded, error: errors })
  )
  .middleware(Authorization)
{}
