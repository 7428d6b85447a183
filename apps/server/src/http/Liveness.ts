import { HttpRouter, HttpServerResponse } from "effect/http"

/** The liveness probe's path, at the listener's root beside `/metrics`. */
const path = "/livez"

/**
 * `GET /livez`: 200 `{"status":"alive"}` whenever the process's event loop can answer, whatever
 * its dependencies do. It reads no store, no Redis, no disk and needs no key, so a liveness probe
 * on it restarts only a process that no longer answers at all: a store outage is readiness's
 * matter (`/api/v1/health` answers 503 meanwhile) and restarting every replica for it would only
 * add cold starts to the outage. It stays 200 while the process drains after `SIGTERM` (on the
 * connections still open; new ones are refused once the socket stops accepting).
 */
export const layer = HttpRouter.add("GET", path, HttpServerResponse.jsonUnsafe({ status: "alive" }))
