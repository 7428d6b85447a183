import type * as Catalog from "@switchyard/core/catalog/Catalog"
import type * as Fallback from "@switchyard/core/upstream/Fallback"

/**
 * The attributes the gateway's spans carry about a model call, named after OpenTelemetry's GenAI
 * semantic conventions where one fits (`gen_ai.*`) and `switchyard.*` for what they have no name
 * for (the generation id, the cost charged, BYOK). `gen_ai.operation.name` is the task:
 * `embeddings` is the convention's own value; `rerank` has none there.
 */

/** An upstream attempt: the model, the provider and the upstream model it asks for. */
export const attempt = (a: Fallback.Attempt): Record<string, unknown> => ({
  "gen_ai.operation.name": a.candidate.endpoint.task,
  "gen_ai.provider.name": a.candidate.provider.slug,
  "gen_ai.request.model": a.candidate.endpoint.model,
  "switchyard.upstream_model": a.candidate.endpoint.upstream_model,
  "switchyard.endpoint": a.candidate.id,
  "switchyard.byok": a.byok
})

/** What an upstream reported it consumed. */
export const usage = (inputTokens: number): Record<string, unknown> => ({ "gen_ai.usage.input_tokens": inputTokens })

/**
 * A served model call, on its request's span: the model, the serving provider, the generation,
 * what it consumed and what it was charged.
 */
export const served = (call: {
  readonly task: Catalog.Task
  readonly id: string
  readonly model: string
  readonly provider: string
  readonly totalTokens: number
  readonly cost: number
  readonly isByok: boolean
}): Record<string, unknown> => ({
  "gen_ai.operation.name": call.task,
  "gen_ai.request.model": call.model,
  "gen_ai.response.model": call.model,
  "gen_ai.provider.name": call.provider,
  "gen_ai.usage.input_tokens": call.totalTokens,
  "switchyard.generation_id": call.id,
  "switchyard.cost_usd": call.cost,
  "switchyard.byok": call.isByok
})
