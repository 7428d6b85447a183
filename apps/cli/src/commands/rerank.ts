import { GatewayClient } from "@switchyard/client/GatewayClient"
import { RerankRequest } from "@switchyard/core/schema/RerankRequest"
import type { RerankResponse } from "@switchyard/core/schema/RerankResponse"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as InputFile from "../batch/InputFile.ts"
import * as Connection from "../Connection.ts"
import * as Failure from "../Failure.ts"
import * as Output from "../Output.ts"
import * as ProviderFlags from "../ProviderFlags.ts"
import * as SharedFlags from "../SharedFlags.ts"


const printSummary = (documents: ReadonlyArray<string>, response: RerankResponse) =>
  Effect.gen(function*() {
    yield* Output.table([
      { header: "RANK", value: (r) => String(r.rank), align: "right" },
      { header: "#", value: (r) => String(r.index), align: "right" },
      { header: "SCORE", value: (r) => r.relevance_score.toFixed(4), align: "right" },
      { header: "DOCUMENT", value: (r) => JSON.stringify(Output.clip(documents[r.index] ?? "", 60)) }
    ], response.results.map((r, i) => ({ ...r, rank: i + 1 })))
    yield* Output.line("")
    const { usage } = response
    const billed = usage.search_units > 0 ? `${usage.search_units} search unit${usage.search_units === 1 ? "" : "s"} · ` : ""
    yield* Output.line(
      `model ${response.model} via ${response.provider} · ${billed}${usage.total_tokens.toLocaleString("en-US")} tokens · ${Output.money(usage.cost)}`
    )
  })

export const rerank = Command.make(
  "rerank",
  {
    documents: Argument.String("document").pipe(
      Argument.withDescription("Documents to score against the query (or --file)"),
      Argument.variadic()
    ),
    model: Flag.String("model").pipe(Flag.withAlias("m"), Flag.withMetavar("VENDOR/MODEL"), Flag.withDescription("Rerank model (switchyard/local-rerank needs no provider key)")),
    query: Flag.String("query").pipe(Flag.withAlias("q"), Flag.withMetavar("TEXT"), Flag.withDescription("The query the documents are scored against")),
    topN: Flag.Int("top-n").pipe(Flag.withMetavar("N"), Flag.withDescription("Keep the best N results (default: all)"), Flag.optional),
    maxTokensPerDoc: Flag.Int("max-tokens-per-doc").pipe(Flag.withMetavar("N"), Flag.withDescription("Truncate each document to N tokens, where the provider supports it"), Flag.optional),
    ...ProviderFlags.flags,
    file: Flag.String("file").pipe(Flag.withAlias("f"), Flag.withMetavar("PATH"), Flag.withDescription("JSONL documents, a JSON string or an object with a text field per line (- for stdin)"), Flag.optional),
    textField: Flag.String("text-field").pipe(Flag.withMetavar("NAME"), Flag.withDescription("JSONL field holding the text (default: text)"), Flag.withDefault("text")),
    json: SharedFlags.toggle("json", "Print the whole response as JSON")
  },
  Effect.fn(function*(input) {
    if (Option.isSome(input.file) && input.documents.length > 0) {
      return yield* new Failure.Usage({ message: "Give documents or --file, not both" })
    }
    const documents = Option.isSome(input.file)
      ? (yield* InputFile.read(input.file.value, "jsonl", { text: input.textField, id: "id" })).map((item) => item.text)
      : input.documents
    if (documents.length === 0) {
      return yield* new Failure.Usage({ message: "Nothing to rerank", hint: "Give documents as arguments or a JSONL file with --file." })
    }
    const payload = yield* Failure.validate(RerankRequest, {
      model: input.model,
      query: input.query,
      documents,
      ...(Option.isSome(input.topN) ? { top_n: input.topN.value } : {}),
      ...(Option.isSome(input.maxTokensPerDoc) ? { max_tokens_per_doc: input.maxTokensPerDoc.value } : {}),
      ...(yield* ProviderFlags.providerField(input))
    })
    const client = yield* GatewayClient
    const response = yield* client.rerank.create({ payload })
    if (input.json) return yield* Output.json(response)
    if (Output.stdoutIsTerminal()) return yield* printSummary(documents, response)
    for (const r of response.results) yield* Output.line(JSON.stringify({ index: r.index, relevance_score: r.relevance_score }))
  }, Connection.withGateway)
).pipe(
  Command.withDescription(
    "Score documents against a query with a rerank model and print them best first (a table on a terminal, one JSON object per line when piped)"
  ),
  Command.withShortDescription("Rerank documents against a query"),
  Command.withExamples([
    { command: "switchyard rerank -m switchyard/local-rerank --query \"how do plants make sugar\" \"a train timetable\" \"photosynthesis in leaves\"", description: "Two documents, best first" },
    { command: "switchyard rerank -m cohere/rerank-v3.5 --query \"refund policy\" --file hits.jsonl --top-n 5", description: "The five best of a JSONL file of search hits" },
    { command: "switchyard rerank -m cohere/rerank-v3.5 --zdr --query q --file hits.jsonl --json", description: "Only zero-retention providers; the whole response as JSON" }
  ])
)
