import { InternRuntime } from "@switchyard/core/interns/InternRuntime"
import { Config, Effect, Layer, Option } from "effect"
import * as NodePath from "node:path"
import { StoreConfig } from "../store/database/Database.ts"
import * as HttpRuntime from "./HttpRuntime.ts"
import * as ProcessRuntime from "./ProcessRuntime.ts"

/**
 * Which intern runtime the gateway drives: `process` (default; local processes with their disks
 * under `<SWITCHYARD_DATA_DIR>/interns`) or `http` (an orchestrator at
 * `SWITCHYARD_INTERN_ORCHESTRATOR_URL`).
 */
const RuntimeConfig = Config.all({
  driver: Config.Literals(["process", "http"], "SWITCHYARD_INTERN_RUNTIME").pipe(Config.withDefault("process" as const)),
  orchestratorUrl: Config.option(Config.String("SWITCHYARD_INTERN_ORCHESTRATOR_URL")),
  timeoutMs: Config.Int("SWITCHYARD_INTERN_ORCHESTRATOR_TIMEOUT_MS").pipe(Config.withDefault(5_000)),
  pollIntervalMs: Config.Int("SWITCHYARD_INTERN_ORCHESTRATOR_POLL_MS").pipe(Config.withDefault(1_000)),
  stepDelayMs: Config.Int("SWITCHYARD_INTERN_STEP_DELAY_MS").pipe(Config.withDefault(0))
})

type RuntimeSettings = Config.Success<typeof RuntimeConfig>

const drivers = {
  process: (config: RuntimeSettings, dataDir: string) =>
    ProcessRuntime.layer({ root: NodePath.join(dataDir, "interns"), stepDelayMs: config.stepDelayMs }),
  http: (config: RuntimeSettings) =>
    Option.match(config.orchestratorUrl, {
      onNone: () =>
        Layer.effect(
          InternRuntime,
          Effect.die(new Error("SWITCHYARD_INTERN_RUNTIME=http needs SWITCHYARD_INTERN_ORCHESTRATOR_URL"))
        ),
      onSome: (baseUrl) =>
        HttpRuntime.layer({ baseUrl, timeoutMs: config.timeoutMs, pollIntervalMs: config.pollIntervalMs })
    })
} as const

export const layer: Layer.Layer<InternRuntime, unknown> = Layer.unwrap(Effect.gen(function*() {
  const config = yield* RuntimeConfig
  const store = yield* StoreConfig
  return drivers[config.driver](config, store.dataDir)
}))
