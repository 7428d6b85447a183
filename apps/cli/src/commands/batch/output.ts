import { GatewayClient } from "@switchyard/client/GatewayClient"
import { Effect, Option, Stream } from "effect"
import { Command, Flag } from "effect/cli"
import * as Fs from "node:fs"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import { batchId } from "./get.ts"

export const output = Command.make(
  "output",
  {
    id: batchId,
    errors: SharedFlags.toggle("errors", "The error file (lines that failed) instead of the output file"),
    out: Flag.String("out").pipe(Flag.withMetavar("FILE"), Flag.withDescription("Write to FILE instead of standard output"), Flag.optional)
  },
  Effect.fn(function*({ errors, id, out }) {
    const client = yield* GatewayClient
    const batch = yield* client.batches.get({ params: { batch_id: id } })
    const fileId = errors ? batch.error_file_id : batch.output_file_id
    if (fileId === null) return yield* Output.note(`The batch has no ${errors ? "error" : "output"} file (status ${batch.status}).`)
    const content = yield* client.files.content({ params: { file_id: fileId } })
    const sink = Option.isSome(out) ? Fs.createWriteStream(out.value) : process.stdout
    yield* Stream.runForEach(content, (bytes) =>
      Effect.callback<void>((resume) => {
        if (sink.write(bytes)) resume(Effect.void)
        else sink.once("drain", () => resume(Effect.void))
      }))
    if (Option.isSome(out)) {
      yield* Effect.callback<void>((resume) => {
        ;(sink as Fs.WriteStream).end(() => resume(Effect.void))
      })
    }
  }, Connection.withGatewayListing("switchyard batch list"))
).pipe(Command.withDescription("Print a finished batch's output (or error) lines, as JSONL"))
