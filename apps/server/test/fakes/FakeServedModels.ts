import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * What a fake self-hosted server serves, changeable while it runs: a test adds or removes a
 * model and the server's model list and its embeddings routes follow.
 */
export interface ServedModel {
  readonly id: string
  readonly task: "embeddings" | "rerank"
  readonly dimensions?: number
}

export class Served {
  models: ReadonlyArray<ServedModel>
  constructor(models: ReadonlyArray<ServedModel>) {
    this.models = models
  }
  find(id: unknown, task: ServedModel["task"]): ServedModel | undefined {
    return this.models.find((m) => m.id === id && m.task === task)
  }
}

/** The OpenAI-shaped answer both Infinity and vLLM give to their embeddings route. */
export const embeddingsAnswer = (
  body: Record<string, unknown>,
  model: ServedModel,
  shape: { readonly width?: number; readonly dropOne?: boolean },
  items: ReadonlyArray<{ readonly seed: string; readonly tokens: number }>,
  extra: Record<string, unknown>
) => {
  const dimensions = typeof body.dimensions === "number" ? body.dimensions : undefined
  const width = shape.width ?? dimensions ?? model.dimensions ?? 384
  const base64 = body.encoding_format === "base64"
  const kept = shape.dropOne === true ? items.slice(1) : items
  const tokens = items.reduce((n, item) => n + item.tokens, 0)
  return {
    object: "list",
    data: kept.map((item, index) => {
      const vector = FakeUpstream.vectorFor(`${model.id}|${item.seed}`, width)
      return { object: "embedding", index, embedding: base64 ? FakeUpstream.float32Base64(vector) : vector }
    }),
    model: model.id,
    usage: { prompt_tokens: tokens, total_tokens: tokens },
    ...extra
  }
}
