import { GatewayClient } from "@switchyard/client/GatewayClient"
import { EmbeddingRequest } from "@switchyard/core/schema/EmbeddingRequest"
import type { BadRequest, NotFound } from "@switchyard/core/schema/ApiError"
import { priceText } from "@switchyard/core/routing/CandidateReport"
import { RerankRequest } from "@switchyard/core/schema/RerankRequest"
import { CandidateReport, type RoutePlanReport } from "@switchyard/core/schema/RoutePlanReport"
import { Effect, Option, Schema } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Failure from "../../Failure.ts"
import * as Output from "../../Output.ts"
import * as ProviderFlags from "../../ProviderFlags.ts"
import * as SharedFlags from "../../SharedFlags.ts"

type Candidate = RoutePlanReport["explanation"]["candidates"][number]
type Explanation = RoutePlanReport["explanation"]

export const reason = (c: Candidate, explanation: Explanation): string => {
  const why: Array<string> = []
  if (c.status === "excluded") return `out: ${c.excluded_by ?? "filtered"}${c.detail === undefined ? "" : ` (${c.detail})`}`
  if (c.status === "unused") return "out: eligible, but fallbacks are off"
  if (c.order_match !== undefined) why.push(`listed in --order as ${c.order_match}`)
  if (c.sort_key !== undefined && explanation.sort !== null) why.push(`${explanation.sort.by} ${c.sort_key ?? "unknown"}`)
  if (c.weight !== undefined) {
    const drawn = explanation.draw?.pool.includes(c.id) === true && c.rank === 0
    why.push(`${drawn ? "drawn at random, " : ""}weight ${c.weight.toPrecision(3)}`)
  }
  if (c.meets_cutoffs === false) why.push("misses the latency/throughput preference, so later")
  if (c.recent_failure === true) why.push("failed in the last 30s, so later")
  if (why.length === 0) why.push(c.rank === 0 ? "first choice" : "fallback")
  return why.join("; ")
}

const modeText = (e: Explanation) => {
  const mode = e.mode === "order"
    ? `the --order list (${(e.order ?? []).join(", ")}), then the rest`
    : e.mode === "sort"
    ? `sorted by ${e.sort?.by ?? "?"} (partition ${e.sort?.partition ?? "model"})`
    : "load balanced: drawn at random weighted by 1/price², cheapest fallbacks after"
  return `${mode}; fallbacks ${e.allow_fallbacks ? "allowed" : "off"}`
}

const candidateTable = (explanation: Explanation, task: Task) =>
  Output.table([
    { header: "#", value: (c: Candidate) => (c.rank === undefined ? "-" : String(c.rank + 1)), align: "right" },
    { header: "PROVIDER", value: (c) => c.provider },
    { header: "VARIANT", value: (c) => c.variant },
    // A rerank endpoint may charge per search, per token or both.
    task === "rerank"
      ? { header: "PRICE", value: (c) => priceText(c), align: "right" }
      : { header: "$/M TOKENS", value: (c) => `$${c.prompt_price}`, align: "right" },
    { header: "STATUS", value: (c) => (c.status === "attempt" ? "in" : "out") },
    { header: "WHY", value: (c) => reason(c, explanation) }
  ], [...explanation.candidates].sort((a, b) =>
    (a.rank ?? Number.MAX_SAFE_INTEGER) - (b.rank ?? Number.MAX_SAFE_INTEGER) || a.provider.localeCompare(b.provider)
  ), "No provider serves this model.")

type Task = "embeddings" | "rerank"

const taskOf = (report: RoutePlanReport): Task => (report.object === "rerank.plan" ? "rerank" : "embeddings")

const render = (report: RoutePlanReport, estimated: boolean) =>
  Effect.gen(function*() {
    const task = taskOf(report)
    yield* Output.line(`Route for ${report.model}${task === "rerank" ? " (rerank)" : ""}: ${modeText(report.explanation)}`)
    yield* Output.line("")
    yield* candidateTable(report.explanation, task)
    if (estimated) {
      yield* Output.line("")
      yield* Output.line(
        `Estimate: at most ${report.estimate.prompt_tokens.toLocaleString("en-US")} ${task === "rerank" ? "tokens" : "prompt tokens"}, at most ${
          Output.money(report.estimate.cost)
        } on the first choice.`
      )
    }
  })

const NoRoute = Schema.Struct({ model: Schema.String, reason: Schema.String, candidates: Schema.NonEmptyArray(CandidateReport) })

/**
 * The gateway's 404 when the model exists but every endpoint is out: the table of those endpoints
 * and why each one is out (the 404's `metadata`), then the failure. An unknown model passes through.
 */
const noRoute = (task: Task, json: boolean) => (error: NotFound) =>
  Effect.gen(function*() {
    const found = Schema.decodeUnknownOption(NoRoute)(error.metadata)
    if (Option.isNone(found)) return yield* error
    const { candidates, model, reason } = found.value
    if (!json) {
      yield* Output.line(`No route for ${model}${task === "rerank" ? " (rerank)" : ""}: ${reason}`)
      yield* Output.line("")
      yield* candidateTable({ model, mode: "default", seed: 0, allow_fallbacks: true, order: null, sort: null, candidates }, task)
    }
    return yield* new Failure.Failure({
      message: `${json ? error.message : `No provider can serve ${model} with these preferences`} (HTTP 404 NotFound)`,
      hint: "Each provider is out for the reason in the WHY column: loosen those preferences, or give the provider its credential.",
      exitCode: Failure.ExitCode.notFound
    })
  })

// The gateway's 400 for a model of the other task names the task the model is for.
const isRerankModel = (error: BadRequest) => error.metadata?.task === "rerank"

export const explain = Command.make(
  "explain",
  {
    texts: Argument.String("text").pipe(
      Argument.withDescription("Texts to estimate tokens and cost for (optional; a rerank's documents)"),
      Argument.variadic()
    ),
    model: Flag.String("model").pipe(Flag.withAlias("m"), Flag.withMetavar("VENDOR/MODEL"), Flag.withDescription("Embedding or rerank model")),
    task: Flag.Literals("task", ["embeddings", "rerank"]).pipe(
      Flag.withDescription("The request to explain (default: the model's own task, asked of the gateway)"),
      Flag.optional
    ),
    query: Flag.String("query").pipe(Flag.withAlias("q"), Flag.withMetavar("TEXT"), Flag.withDescription("A rerank's query, for the estimate"), Flag.optional),
    dimensions: Flag.Int("dimensions").pipe(Flag.withMetavar("N"), Flag.withDescription("Dimensions the request would ask for"), Flag.optional),
    encoding: Flag.Literals("encoding", ["float", "base64"]).pipe(Flag.withDescription("Vector encoding the request would ask for"), Flag.optional),
    inputType: Flag.String("input-type").pipe(Flag.withMetavar("KIND"), Flag.withDescription("Input type the request would send"), Flag.optional),
    ...ProviderFlags.flags,
    json: SharedFlags.json
  },
  Effect.fn(function*(input) {
    const provider = yield* ProviderFlags.toPreferences(input)
    const embeddingOnly = [
      ...(Option.isSome(input.dimensions) ? ["--dimensions"] : []),
      ...(Option.isSome(input.encoding) ? ["--encoding"] : []),
      ...(Option.isSome(input.inputType) ? ["--input-type"] : [])
    ]
    const client = yield* GatewayClient
    const explainRerank = Effect.gen(function*() {
      if (embeddingOnly.length > 0) {
        return yield* new Failure.Usage({ message: `${embeddingOnly.join(", ")} apply to embeddings, and ${input.model} is a rerank model` })
      }
      const payload = yield* Failure.validate(RerankRequest, {
        model: input.model,
        query: Option.getOrElse(input.query, () => "route explain"),
        documents: input.texts.length === 0 ? ["route explain"] : input.texts,
        ...(provider === undefined ? {} : { provider })
      })
      return yield* client.rerank.plan({ payload }).pipe(Effect.catchTag("NotFound", noRoute("rerank", input.json)))
    })
    const explainEmbeddings = Effect.gen(function*() {
      if (Option.isSome(input.query)) return yield* new Failure.Usage({ message: "--query applies to rerank, not --task embeddings" })
      const payload = yield* Failure.validate(EmbeddingRequest, {
        input: input.texts.length === 0 ? "route explain" : input.texts.length === 1 ? input.texts[0] : input.texts,
        model: input.model,
        ...(Option.isSome(input.dimensions) ? { dimensions: input.dimensions.value } : {}),
        ...(Option.isSome(input.encoding) ? { encoding_format: input.encoding.value } : {}),
        ...(Option.isSome(input.inputType) ? { input_type: input.inputType.value } : {}),
        ...(provider === undefined ? {} : { provider })
      })
      return yield* client.embeddings.plan({ payload }).pipe(Effect.catchTag("NotFound", noRoute("embeddings", input.json)))
    })
    // A query means rerank; with no task given, the model's own, which the gateway names when
    // asked the other.
    const task = Option.getOrElse(input.task, () => (Option.isSome(input.query) ? "rerank" : undefined))
    const report = task === "rerank"
      ? yield* explainRerank
      : task === "embeddings"
      ? yield* explainEmbeddings
      : yield* explainEmbeddings.pipe(Effect.catchTag("BadRequest", (error) => isRerankModel(error) ? explainRerank : Effect.fail(error)))
    if (input.json) return yield* Output.json(report)
    yield* render(report, input.texts.length > 0 || Option.isSome(input.query))
  }, Connection.withGateway)
).pipe(
  Command.withDescription(
    "Show the route an embeddings or rerank request would take, and why each provider is in or out, without calling any"
  ),
  Command.withExamples([
    { command: "switchyard route explain -m openai/text-embedding-3-small", description: "The default route for a model" },
    { command: "switchyard route explain -m openai/text-embedding-3-small --zdr --sort price --max-price 0.05 \"a text\"", description: "Which providers pass your preferences, and the cost of one text" },
    { command: "switchyard route explain -m cohere/rerank-v3.5 --sort price --query \"refund policy\" \"doc one\" \"doc two\"", description: "A rerank model's route (its task is found), and the worst case of one search" }
  ])
)
