import { knownKeys, type TraceConfig } from "@switchyard/core/schema/TraceConfig"
import { Effect } from "effect"

/**
 * What a request contributes to the gateway's own log and trace context: the known `trace` keys
 * (custom keys go only to broadcast destinations) and the session id, which is never sent to a
 * provider.
 */
export const annotationsOf = (
  request: { readonly trace?: TraceConfig },
  sessionId: string | undefined
): Readonly<Record<string, string>> => {
  const out: Record<string, string> = {}
  for (const key of knownKeys) {
    const value = request.trace?.[key]
    if (typeof value === "string" && value !== "") out[key] = value
  }
  if (sessionId !== undefined && sessionId !== "") out.session_id = sessionId
  return out
}

/**
 * Runs a request's work with its trace keys on every log line and span it produces, and on the
 * HTTP server span it runs under.
 */
export const within = (annotations: Readonly<Record<string, string>>) =>
<A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Object.keys(annotations).length === 0
    ? self
    : Effect.annotateCurrentSpan(annotations).pipe(
      Effect.andThen(self),
      Effect.annotateSpans(annotations),
      Effect.annotateLogs(annotations)
    )
