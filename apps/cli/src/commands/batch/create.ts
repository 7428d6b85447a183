import { GatewayClient } from "@switchyard/client/GatewayClient"
import * as Batch from "@switchyard/core/schema/Batch"
import { SingleBar } from "cli-progress"
import { Duration, Effect } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"
import * as BatchView from "./BatchView.ts"

export const create = Command.make(
  "create",
  {
    file: Argument.String("file").pipe(Argument.withDescription("A JSONL file of input lines ({ custom_id, method, url, body })")),
    endpoint: Flag.Literals("endpoint", ["/v1/embeddings", "/v1/rerank"]).pipe(
      Flag.withDescription("The endpoint every line calls"),
      Flag.withDefault("/v1/embeddings")
    ),
    wait: SharedFlags.toggle("wait", "Wait until the batch is finished, showing its progress"),
    live: SharedFlags.toggle("live", "Run every line as a live call, never through a provider's batch API (at its batch price)"),
    json: SharedFlags.json
  },
  Effect.fn(function*({ endpoint, file, json, live, wait }) {
    const client = yield* GatewayClient
    // A Blob backed by the file: the upload streams it.
    const blob = yield* Effect.promise(() => Fs.openAsBlob(file))
    const form = new FormData()
    form.append("purpose", "batch")
    form.append("file", blob, NodePath.basename(file))
    const uploaded = yield* client.files.upload({ payload: form })
    let batch = yield* client.batches.create({
      payload: { input_file_id: uploaded.id, endpoint, completion_window: "24h" },
      headers: live ? { [Batch.executionHeader]: "live" } : {}
    })
    if (wait) {
      const bar = Output.stderrIsTerminal()
        ? new SingleBar({ stream: process.stderr, format: "batch {bar} {percentage}% | {value}/{total} lines | {failed} failed | {status}", hideCursor: true })
        : undefined
      let started = false
      while (!BatchView.finished(batch)) {
        yield* Effect.sleep(Duration.seconds(1))
        batch = yield* client.batches.get({ params: { batch_id: batch.id } })
        const { completed, failed, total } = batch.request_counts
        if (bar !== undefined && total > 0) {
          if (!started) bar.start(total, 0, { failed: 0, status: batch.status })
          started = true
          bar.update(completed + failed, { failed, status: batch.status })
        }
      }
      bar?.stop()
    }
    if (json) return yield* Output.json(batch)
    yield* BatchView.record(batch)
  }, Connection.withGateway)
).pipe(
  Command.withDescription("Upload a JSONL file and run it as a batch (OpenAI's Batch API): each line a request, charged as a live call"),
  Command.withExamples([
    { command: "switchyard batch create corpus.jsonl --wait", description: "Embed a corpus as a batch, waiting for it" },
    { command: "switchyard batch create pairs.jsonl --endpoint /v1/rerank", description: "A batch of rerank requests" },
    { command: "switchyard batch create corpus.jsonl --live --wait", description: "Live calls only: done in minutes, at the live price" }
  ])
)
