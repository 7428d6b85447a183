import { Command } from "effect/cli"
import { cancel } from "./batch/cancel.ts"
import { create } from "./batch/create.ts"
import { get } from "./batch/get.ts"
import { list } from "./batch/list.ts"
import { output } from "./batch/output.ts"

export const batch = Command.make("batch").pipe(
  Command.withDescription("Batches of embeddings or rerank requests (OpenAI's Batch API), run and charged line by line"),
  Command.withExamples([
    { command: "switchyard batch create corpus.jsonl --wait", description: "Run a file as a batch and wait for it" },
    { command: "switchyard batch output batch_abc --out vectors.jsonl", description: "Save its output" }
  ]),
  Command.withSubcommands([create, list, get, cancel, output])
)
