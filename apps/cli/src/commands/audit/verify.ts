import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import { ExitCode, Failure } from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"

export const verify = Command.make(
  "verify",
  { json: SharedFlags.json },
  Effect.fn(function*({ json }) {
    const client = yield* GatewayClient
    const result = yield* client.audit.verify()
    if (json) yield* Output.json(result)
    else if (result.ok) yield* Output.line(`The audit log's chain holds: ${result.checked} entries checked.`)
    if (!result.ok) {
      const broken = result.first_broken
      return yield* new Failure({
        message: `The audit log's chain is broken at entry ${broken?.id ?? "?"} (${broken?.reason ?? "unknown"}); ${result.checked} entries before it hold`,
        hint: "An entry was changed or removed in the store outside the gateway; restore it from a backup.",
        exitCode: ExitCode.refused
      })
    }
  }, Connection.withGateway)
).pipe(Command.withDescription("Check every link of the audit log's hash chain (instance administrators)"))
