import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect } from "effect"
import { Command } from "effect/cli"
import * as Connection from "../../Connection.ts"
import { Failure, ExitCode } from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as ProviderView from "./ProviderView.ts"

export const test = Command.make(
  "test",
  { slug: ProviderView.slugArgument, json: SharedFlags.json },
  Effect.fn(function*({ json, slug }) {
    const client = yield* GatewayClient
    const { data } = yield* client.providerAdmin.test({ params: { slug } })
    if (json) yield* Output.json({ data })
    else {
      yield* Output.list(data.endpoints, {
        json: false,
        empty: "The provider has no endpoints.",
        columns: [
          { header: "MODEL", value: (e) => e.model },
          { header: "TASK", value: (e) => e.task },
          { header: "RESULT", value: (e) => (e.ok ? "ok" : "failed") },
          { header: "STATUS", value: (e) => Output.show(e.status), align: "right" },
          { header: "LATENCY", value: (e) => `${Math.round(e.latency_ms)} ms`, align: "right" },
          { header: "ERROR", value: (e) => Output.clip(e.error ?? "", 60) }
        ]
      })
    }
    if (!data.ok) {
      return yield* new Failure({ message: `Provider ${slug} failed its test`, hint: undefined, exitCode: ExitCode.unavailable })
    }
  }, Connection.withGatewayListing("switchyard providers list"))
).pipe(Command.withDescription("Make one small call to each of a provider's endpoints: status and latency"))
