import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { EmbeddingModel } from "@switchyard/core/schema/EmbeddingResponse"
import { maxPageSize } from "@switchyard/core/schema/EmbeddingResponse"
import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import * as Connection from "../../Connection.ts"
import * as Output from "../../Output.ts"
import * as SharedFlags from "../../SharedFlags.ts"

const perMillion = (perToken: string): string => {
  const value = Number(perToken)
  return Number.isFinite(value) ? `$${Number((value * 1_000_000).toPrecision(10))}` : perToken
}

const columns: ReadonlyArray<Output.Column<EmbeddingModel>> = [
  { header: "MODEL", value: (m) => m.id },
  { header: "NAME", value: (m) => m.name },
  { header: "CONTEXT", value: (m) => (m.context_length === null ? "-" : m.context_length.toLocaleString("en-US")), align: "right" },
  { header: "$/M TOKENS", value: (m) => perMillion(m.pricing.prompt), align: "right" },
  {
    header: "$/1K SEARCHES",
    value: (m) => (m.pricing.search === undefined ? "-" : `$${Number((Number(m.pricing.search) * 1_000).toPrecision(10))}`),
    align: "right"
  },
  { header: "INPUT", value: (m) => m.architecture.input_modalities.join(",") },
  { header: "PARAMETERS", value: (m) => m.supported_parameters.join(",") }
]

export const list = Command.make(
  "list",
  {
    json: SharedFlags.json,
    task: Flag.Literals("task", ["embeddings", "rerank"]).pipe(
      Flag.withDescription("Which models: embeddings (default) or rerank"),
      Flag.withDefault("embeddings" as const)
    )
  },
  Effect.fn(function*({ json, task }) {
    const client = yield* GatewayClient
    const all: Array<EmbeddingModel> = []
    for (let offset = 0;;) {
      const query = { limit: maxPageSize, offset }
      const page = yield* (task === "rerank" ? client.rerank.listModels({ query }) : client.embeddings.listModels({ query }))
      all.push(...page.data)
      offset += page.data.length
      if (page.data.length === 0 || page.links.next === null || offset >= page.total_count) break
    }
    const shown = task === "rerank" ? columns : columns.filter((c) => c.header !== "$/1K SEARCHES")
    yield* Output.list(all, { json, columns: shown, empty: `No ${task === "rerank" ? "rerank" : "embedding"} models are available: no provider is configured with a key.` })
  }, Connection.withGateway)
).pipe(
  Command.withDescription("List the embedding models (or, with --task rerank, the rerank models) the gateway can serve, with their list prices"),
  Command.withAlias("ls"),
  Command.withExamples([
    { command: "switchyard models list", description: "As a table" },
    { command: "switchyard models list --json", description: "As JSON, in the OpenRouter models shape" },
    { command: "switchyard models list --task rerank", description: "The rerank models, with their price per 1,000 searches" }
  ])
)
