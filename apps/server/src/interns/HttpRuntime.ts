import type { Observed } from "@switchyard/core/interns/InternLifecycle"
import { InternRuntime, type RuntimeEvent, type RuntimeSpec, RuntimeUnavailable } from "@switchyard/core/interns/InternRuntime"
import { InternProgress } from "@switchyard/core/schema/Intern"
import { Duration, Effect, Layer, PubSub, Schedule, Schema } from "effect"
import { FetchHttpClient, HttpClient, HttpClientRequest, type HttpClientResponse } from "effect/http"

/**
 * The `http` driver: an external orchestrator runs the interns and this driver calls it, each call
 * within `timeoutMs`.
 *
 * Protocol (JSON, paths under `baseUrl`):
 * - `POST /interns/{id}/start` with the run's settings, answers `{ hostname }`;
 * - `POST /interns/{id}/stop` stops the runtime and keeps its disk, answers once stopped;
 * - `DELETE /interns/{id}` stops it and erases its disk (404 counts as done);
 * - `GET /interns/{id}` answers `{ state, run_id, progress, message }` (404 = absent), with
 *   `state` one of `absent`, `stopped`, `starting`, `running`, `failed`.
 * Events come from polling `GET` every `pollIntervalMs` for each intern started or seen running.
 */
export interface HttpRuntimeOptions {
  readonly baseUrl: string
  readonly timeoutMs?: number
  readonly pollIntervalMs?: number
}

const OrchestratorState = Schema.Struct({
  state: Schema.Literals(["absent", "stopped", "starting", "running", "failed"]),
  run_id: Schema.NullOr(Schema.String),
  progress: Schema.NullOr(InternProgress),
  message: Schema.NullOr(Schema.String)
})

type OrchestratorState = typeof OrchestratorState.Type

const StartAnswer = Schema.Struct({ hostname: Schema.String })

const absent: OrchestratorState = { state: "absent", run_id: null, progress: null, message: null }

interface Tracked {
  readonly runId: string
  last: string
}

const unavailable = (what: string) => (cause: unknown) =>
  new RuntimeUnavailable({
    message: `The intern orchestrator could not be reached (${what}): ${cause instanceof Error ? cause.message : String(cause)}`
  })

const toObserved = (s: OrchestratorState): Observed => {
  switch (s.state) {
    case "absent":
      return { _tag: "Absent" }
    case "stopped":
      return { _tag: "Stopped" }
    case "starting":
      return { _tag: "Starting", progress: s.progress }
    case "running":
      return { _tag: "Running" }
    case "failed":
      return { _tag: "Failed", message: s.message ?? "The orchestrator reports the intern failed" }
  }
}

const make = (options: HttpRuntimeOptions) =>
  Effect.gen(function*() {
    const client = yield* HttpClient.HttpClient
    const base = options.baseUrl.replace(/\/+$/u, "")
    const timeout = Duration.millis(options.timeoutMs ?? 5_000)
    const events = yield* PubSub.unbounded<RuntimeEvent>()
    const tracked = new Map<string, Tracked>()

    const call = <A>(
      what: string,
      request: HttpClientRequest.HttpClientRequest,
      onResponse: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, unknown>
    ) =>
      client.execute(request).pipe(
        Effect.flatMap(onResponse),
        Effect.timeoutOrElse({
          duration: timeout,
          orElse: () => Effect.fail(new Error(`no answer within ${Duration.toMillis(timeout)} ms`))
        }),
        Effect.mapError(unavailable(what))
      )

    const expectOk = (response: HttpClientResponse.HttpClientResponse, accept404 = false) =>
      response.status >= 200 && response.status < 300 || (accept404 && response.status === 404)
        ? Effect.void
        : Effect.flatMap(
          Effect.orElseSucceed(response.text, () => ""),
          (text) => Effect.fail(new Error(`HTTP ${response.status} ${text.slice(0, 200)}`))
        )

    const url = (internId: string, suffix = "") => `${base}/interns/${encodeURIComponent(internId)}${suffix}`

    const fetchState = (internId: string) =>
      call("inspect", HttpClientRequest.get(url(internId)), (response) =>
        response.status === 404
          ? Effect.succeed(absent)
          : expectOk(response).pipe(
            Effect.andThen(response.json),
            Effect.flatMap(Schema.decodeUnknownEffect(OrchestratorState))
          ))

    const observe = (internId: string, t: Tracked, s: OrchestratorState) => {
      if (s.run_id !== t.runId && s.state !== "absent") return
      const key = JSON.stringify([s.state, s.progress])
      if (key === t.last) return
      t.last = key
      const base = { internId, runId: t.runId }
      switch (s.state) {
        case "starting":
          if (s.progress !== null) PubSub.publishUnsafe(events, { _tag: "Progress", ...base, progress: s.progress })
          return
        case "running":
          PubSub.publishUnsafe(events, { _tag: "Ready", ...base })
          return
        case "failed":
        case "stopped":
        case "absent":
          tracked.delete(internId)
          PubSub.publishUnsafe(events, {
            _tag: "Crashed",
            ...base,
            message: s.message ?? `The orchestrator reports the intern ${s.state}`
          })
      }
    }

    const poll = Effect.suspend(() => Effect.forEach(
      [...tracked.keys()],
      (internId) =>
        fetchState(internId).pipe(
          Effect.tap((s) =>
            Effect.sync(() => {
              const t = tracked.get(internId)
              if (t !== undefined) observe(internId, t, s)
            })
          ),
          Effect.ignore
        ),
      { concurrency: 8, discard: true }
    ))

    yield* poll.pipe(
      Effect.repeat(Schedule.spaced(Duration.millis(options.pollIntervalMs ?? 1_000))),
      Effect.forkScoped
    )

    const stop = (internId: string) =>
      Effect.suspend(() => {
        tracked.delete(internId)
        return call("stop", HttpClientRequest.post(url(internId, "/stop")), (r) => expectOk(r))
      })

    return InternRuntime.of({
      driver: "http",
      start: (spec: RuntimeSpec) =>
        call(
          "start",
          HttpClientRequest.post(url(spec.internId, "/start")).pipe(HttpClientRequest.bodyJsonUnsafe({
            run_id: spec.runId,
            workspace_id: spec.workspaceId,
            name: spec.name,
            hostname: spec.hostname,
            instructions: spec.instructions,
            model: spec.model,
            vault_id: spec.vaultId,
            attached_vault_id: spec.attachedVaultId
          })),
          (response) =>
            expectOk(response).pipe(
              Effect.andThen(response.json),
              Effect.flatMap(Schema.decodeUnknownEffect(StartAnswer))
            )
        ).pipe(Effect.tap(() => Effect.sync(() => tracked.set(spec.internId, { runId: spec.runId, last: "" })))),
      stop,
      destroy: (internId) =>
        Effect.suspend(() => {
          tracked.delete(internId)
          return call("destroy", HttpClientRequest.delete(url(internId)), (r) => expectOk(r, true))
        }),
      inspect: (internId) =>
        fetchState(internId).pipe(
          Effect.tap((s) =>
            Effect.sync(() => {
              if ((s.state === "running" || s.state === "starting") && s.run_id !== null && !tracked.has(internId)) {
                tracked.set(internId, { runId: s.run_id, last: JSON.stringify([s.state, s.progress]) })
              }
            })
          ),
          Effect.map(toObserved)
        ),
      subscribe: PubSub.subscribe(events)
    })
  })

export const layer = (options: HttpRuntimeOptions) =>
  Layer.effect(InternRuntime, make(options)).pipe(Layer.provide(FetchHttpClient.layer))
