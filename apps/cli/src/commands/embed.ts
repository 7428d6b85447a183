import { GatewayClient } from "@switchyard/client/GatewayClient"
import { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import type { EmbeddingResponse } from "@switchyard/core/schema/EmbeddingResponse"
import { Effect, Option } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as BatchEmbed from "../batch/BatchEmbed.ts"
import * as InputFile from "../batch/InputFile.ts"
import * as Progress from "../batch/Progress.ts"
import * as Connection from "../Connection.ts"
import * as Failure from "../Failure.ts"
import * as Output from "../Output.ts"
import * as ProviderFlags from "../ProviderFlags.ts"
import * as SharedFlags from "../SharedFlags.ts"

const readStdin = Effect.tryPromise({
  try: async () => {
    const chunks: Array<Buffer> = []
    for await (const chunk of process.stdin) chunks.push(Buffer.from(chunk as Uint8Array))
    return Buffer.concat(chunks).toString("utf8")
  },
  catch: (error) => new Failure.Usage({ message: `Cannot read standard input: ${String(error)}` })
})

const preview = (embedding: ReadonlyArray<number> | string) => {
  if (typeof embedding === "string") return `base64, ${embedding.length} characters`
  const head = embedding.slice(0, 4).map((x) => String(Number(x.toPrecision(3)))).join(", ")
  return `[${head}${embedding.length > 4 ? ", …" : ""}]`
}

const norm = (embedding: ReadonlyArray<number> | string) =>
  typeof embedding === "string" ? "-" : Math.sqrt(embedding.reduce((sum, x) => sum + x * x, 0)).toFixed(4)


const printSummary = (texts: ReadonlyArray<string>, response: EmbeddingResponse) =>
  Effect.gen(function*() {
    const rows = response.data.map((d, i) => ({ d, text: texts[d.index ?? i] ?? "" }))
    yield* Output.table([
      { header: "#", value: (r) => String(r.d.index ?? 0), align: "right" },
      { header: "INPUT", value: (r) => JSON.stringify(Output.clip(r.text, 40)) },
      { header: "DIMS", value: (r) => (typeof r.d.embedding === "string" ? "-" : String(r.d.embedding.length)), align: "right" },
      { header: "NORM", value: (r) => norm(r.d.embedding), align: "right" },
      { header: "VECTOR", value: (r) => preview(r.d.embedding) }
    ], rows)
    const usage = response.usage
    yield* Output.line("")
    yield* Output.line(
      `model ${response.model}` +
        (usage === undefined ? "" : ` · ${usage.prompt_tokens.toLocaleString("en-US")} tokens · ${Output.money(usage.cost ?? 0)}`) +
        " · --json prints the vectors"
    )
  })

export const embed = Command.make(
  "embed",
  {
    texts: Argument.String("text").pipe(
      Argument.withDescription("Texts to embed, one vector each (default: all of standard input as one text)"),
      Argument.variadic()
    ),
    model: Flag.String("model").pipe(Flag.withAlias("m"), Flag.withMetavar("VENDOR/MODEL"), Flag.withDescription("Embedding model (`switchyard models list` shows them)")),
    dimensions: Flag.Int("dimensions").pipe(Flag.withMetavar("N"), Flag.withDescription("Dimensions of the vectors, for models that can shorten them"), Flag.optional),
    encoding: Flag.Literals("encoding", ["float", "base64"]).pipe(Flag.withDescription("Vector encoding (default: float)"), Flag.optional),
    dtype: Flag.Literals("dtype", ["float", "int8", "uint8", "binary", "ubinary"]).pipe(
      Flag.withDescription("Vector type (default: float); binary and ubinary pack one bit a dimension"),
      Flag.optional
    ),
    truncate: Flag.Literals("truncate", ["none", "start", "end", "chunk"]).pipe(
      Flag.withDescription("An input longer than the model takes: none refuses it (default), start or end cuts it, chunk embeds it in windows"),
      Flag.optional
    ),
    inputType: Flag.String("input-type").pipe(Flag.withMetavar("KIND"), Flag.withDescription("Kind of input for models that distinguish (search_query, search_document...)"), Flag.optional),
    ...ProviderFlags.flags,
    file: Flag.String("file").pipe(Flag.withAlias("f"), Flag.withMetavar("PATH"), Flag.withDescription("Batch mode: embed every input of a .txt (a line each), .jsonl or .csv file (- for stdin)"), Flag.optional),
    out: Flag.String("out").pipe(Flag.withAlias("o"), Flag.withMetavar("PATH"), Flag.withDescription("Batch mode: JSONL file the vectors are appended to; a rerun skips the ids it holds"), Flag.optional),
    format: Flag.Literals("format", InputFile.formats).pipe(Flag.withDescription("Input format (default: from the file extension; txt otherwise)"), Flag.optional),
    textField: Flag.String("text-field").pipe(Flag.withMetavar("NAME"), Flag.withDescription("JSONL field or CSV column holding the text (default: text)"), Flag.withDefault("text")),
    idField: Flag.String("id-field").pipe(Flag.withMetavar("NAME"), Flag.withDescription("JSONL field or CSV column holding the id (default: line or row number)"), Flag.withDefault("id")),
    batchSize: Flag.Int("batch-size").pipe(Flag.withMetavar("N"), Flag.withDescription("Inputs per request (default: 64)"), Flag.withDefault(64)),
    concurrency: Flag.Int("concurrency").pipe(Flag.withMetavar("N"), Flag.withDescription("Requests in flight at once (default: 4)"), Flag.withDefault(4)),
    json: SharedFlags.toggle("json", "Print the whole response (batch mode: the summary) as JSON")
  },
  Effect.fn(function*(input) {
    const request = yield* Failure.validate(EmbeddingRequest, {
      input: "-",
      model: input.model,
      ...(Option.isSome(input.dimensions) ? { dimensions: input.dimensions.value } : {}),
      ...(Option.isSome(input.encoding) ? { encoding_format: input.encoding.value } : {}),
      ...(Option.isSome(input.dtype) ? { output_dtype: input.dtype.value } : {}),
      ...(Option.isSome(input.truncate) ? { truncate: input.truncate.value } : {}),
      ...(Option.isSome(input.inputType) ? { input_type: input.inputType.value } : {}),
      ...(yield* ProviderFlags.providerField(input))
    })
    const { input: _, ...options } = request

    if (Option.isSome(input.file)) {
      const file = input.file.value
      if (input.texts.length > 0) return yield* new Failure.Usage({ message: "Give texts or --file, not both" })
      if (Option.isNone(input.out)) {
        return yield* new Failure.Usage({ message: "--file needs --out", hint: "For example: switchyard embed --file docs.jsonl --out vectors.jsonl --model VENDOR/MODEL" })
      }
      if (input.batchSize < 1 || input.concurrency < 1) return yield* new Failure.Usage({ message: "--batch-size and --concurrency must be at least 1" })
      const summary = yield* BatchEmbed.run({
        file,
        out: input.out.value,
        format: Option.getOrElse(input.format, () => InputFile.formatOf(file)),
        fields: { text: input.textField, id: input.idField },
        batchSize: input.batchSize,
        concurrency: input.concurrency,
        request: options,
        terminal: Output.stderrIsTerminal()
      })
      if (input.json) return yield* Output.json(summary)
      return yield* Output.record([
        ["inputs", `${summary.total} (${summary.embedded} embedded now, ${summary.skipped} already in ${summary.out})`],
        ["model", summary.model],
        ["cache", `${summary.cached} of ${summary.embedded} from the gateway's cache`],
        ["tokens", `${summary.tokens.toLocaleString("en-US")} (this run)`],
        ["cost", `${Output.money(summary.cost)} (this run)`],
        ["time", `${Progress.duration(summary.seconds)} (${(summary.seconds > 0 ? summary.embedded / summary.seconds : 0).toFixed(1)}/s)`],
        ["output", summary.out]
      ])
    }
    if (Option.isSome(input.out)) return yield* new Failure.Usage({ message: "--out needs --file", hint: "Without --file the vectors are printed." })

    const texts = input.texts.length > 0
      ? input.texts
      : process.stdin.isTTY
      ? yield* new Failure.Usage({ message: "Nothing to embed", hint: "Give texts as arguments, pipe text in, or use --file." })
      : [(yield* readStdin).replace(/\n$/u, "")]
    const payload = yield* Failure.validate(EmbeddingRequest, { ...options, input: texts.length === 1 ? texts[0] : texts })
    const client = yield* GatewayClient
    const response = yield* client.embeddings.create({ payload })
    if (input.json) return yield* Output.json(response)
    if (Output.stdoutIsTerminal()) return yield* printSummary(texts, response)
    for (const d of response.data) yield* Output.line(JSON.stringify(d.embedding))
  }, Connection.withGateway)
).pipe(
  Command.withDescription(
    "Embed texts and print the vectors (a summary on a terminal, one JSON array per line when piped), or embed a whole file with --file/--out"
  ),
  Command.withShortDescription("Embed texts, standard input or a whole file"),
  Command.withExamples([
    { command: "switchyard embed -m openai/text-embedding-3-small \"first text\" \"second text\"", description: "Two vectors, summarised on a terminal" },
    { command: "echo 'some text' | switchyard embed -m openai/text-embedding-3-small --json", description: "Standard input as one text; the whole response as JSON" },
    { command: "switchyard embed -m openai/text-embedding-3-small --sort price --max-price 0.05 --zdr \"hi\"", description: "The cheapest zero-retention provider under $0.05 per million tokens" },
    { command: "switchyard embed -m openai/text-embedding-3-small --dimensions 256 --dtype int8 --truncate chunk \"a long text\"", description: "256 dimensions as int8, a text longer than the model takes embedded in windows" },
    { command: "switchyard embed -m openai/text-embedding-3-small --file docs.jsonl --out vectors.jsonl", description: "Batch mode with a progress bar; rerun the same command to resume" },
    { command: "switchyard embed -m openai/text-embedding-3-small --file docs.csv --text-field body --id-field doc_id --out v.jsonl --concurrency 8", description: "A CSV corpus, 8 requests at a time" }
  ])
)
