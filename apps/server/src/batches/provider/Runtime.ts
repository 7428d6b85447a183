import * as Catalog from "@switchyard/core/catalog/Catalog"
import type { EmbeddingProvider } from "@switchyard/core"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as EndpointParameters from "@switchyard/core/routing/EndpointParameters"
import { type ApiError, BadRequest } from "@switchyard/core/schema/ApiError"
import * as BatchLine from "@switchyard/core/schema/BatchLine"
import type * as EmbeddingRequestSchema from "@switchyard/core/schema/EmbeddingRequest"
import type { Accounting } from "@switchyard/core/store/Accounting"
import type * as Fallback from "@switchyard/core/upstream/Fallback"
import type { StoreUnavailable } from "@switchyard/core/store/StoreUnavailable"
import { Effect, Result } from "effect"
import type { LoadedCatalog } from "../../catalog/CatalogLoader.ts"
import type * as Preparation from "../../embeddings/Preparation.ts"
import type { GatewayMetrics } from "../../observability/GatewayMetrics.ts"
import type { resolveModel } from "../../pipeline/Route.ts"
import * as UpstreamInput from "../../providers/UpstreamInput.ts"
import type { BatchRow, BatchStore } from "../../store/batches/BatchStore.ts"
import type { ProviderBatchRow, ProviderBatchStore } from "../../store/batches/ProviderBatchStore.ts"
import { type BatchIdentity, decodeEmbeddings } from "../BatchLines.ts"
import type { LineRunner } from "../LineRunner.ts"

/**
 * What the parts of the provider batches (Divert.ts, Submit.ts, Poll.ts, Settle.ts, Files.ts,
 * Cleanup.ts) share: the services they call, the runner's settings and its claims' owner, and how
 * a line's request is read and what its endpoint is sent.
 */
export interface Runtime {
  readonly config: {
    /** How often a provider batch is asked how it stands. */
    readonly pollMs: number
    /** How often a replica looks for provider batches due (the batch runner's poll). */
    readonly loopMs: number
    /** How long one step on a provider batch keeps its claim at most. */
    readonly leaseMs: number
    /** How long batch files are kept: a provider batch's files at the provider go by then at the latest. */
    readonly retentionMs: number
  }
  readonly loaded: LoadedCatalog
  readonly accounting: Accounting["Service"]
  readonly store: BatchStore["Service"]
  readonly parts: ProviderBatchStore["Service"]
  readonly lineRunner: LineRunner["Service"]
  readonly metrics: GatewayMetrics["Service"]
  readonly prepare: ReturnType<typeof Preparation.make>
  /** One adapter per batch API. */
  readonly apis: Record<Catalog.BatchApi, BatchProvider.BatchProvider>
  readonly resolved: ReturnType<typeof resolveModel>
  /** The name the runner's claims are held under. */
  readonly owner: string
}

/** How long a cancelled provider batch is waited for (OpenAI's cancel takes up to 10 minutes). */
export const cancelWaitMs = 10 * 60 * 1000

/** Submissions refused this many times in a row run their lines live instead. */
export const maxSubmitFailures = 3

/** The key of a line's request (or, `line-{n}.{i}`, requests) in the provider's file. */
export const upstreamId = (line: number) => `line-${line}`

/**
 * A provider batch's job name, the same on every try: the job, and its folder in a bucket, go by
 * it (`switchyard-{batch}-{seq}`, within Bedrock's 63 characters of letters, digits and dashes).
 */
export const jobName = (part: { readonly batch_id: string; readonly seq: number }) =>
  `switchyard-${part.batch_id.replace(/^batch_/u, "").replace(/[^A-Za-z0-9]/gu, "")}-${part.seq}`

/** What a provider batch's job is made with; a row older than the column names no model (its lines do). */
export const jobOf = (part: { readonly job: string | null }): BatchProvider.Job =>
  part.job === null ? { model: "", params: {} } : JSON.parse(part.job) as BatchProvider.Job

/** Deletions of a provider batch's files failing this many times in a row are given up (and logged). */
export const maxCleanupFailures = 5

/** A line's request, decoded and its model resolved as the live endpoint does; else its error. */
export const requestOf = (run: Runtime, batch: BatchIdentity, line: number, text: string) =>
  Effect.gen(function*() {
    const parsed = BatchLine.parse(text, line, batch.endpoint)
    if (parsed._tag === "Invalid") {
      return Result.fail<ApiError>(new BadRequest({ message: parsed.invalid.message }))
    }
    const request = yield* Effect.result(Effect.flatMap(decodeEmbeddings(parsed.request.body), run.resolved))
    return Result.map(request, (r) => ({ customId: parsed.request.customId, request: r }))
  })

/**
 * What the endpoint is sent for a request, as the live attempt sends it (under its batch
 * deployment's name, if it has one), and what it was asked (`EndpointParameters.forEndpoint`).
 */
export const upstreamRequestOf = (
  request: EmbeddingRequestSchema.EmbeddingRequest,
  prepared: Preparation.Prepared,
  candidate: Fallback.Attempt["candidate"]
) => {
  const { endpoint, provider } = candidate
  const asked = EndpointParameters.forEndpoint(request, provider, endpoint)
  const input = UpstreamInput.forEndpoint(prepared.input, Catalog.inputModalitiesOf(provider, endpoint))
  const upstream: EmbeddingProvider.UpstreamRequest = {
    upstreamModel: endpoint.batch_upstream_model ?? endpoint.upstream_model,
    encodingFormat: asked.encoding,
    ...(asked.dimensions !== undefined ? { dimensions: asked.dimensions } : {}),
    ...(asked.inputType !== undefined ? { inputType: asked.inputType } : {}),
    ...(asked.user !== undefined ? { user: asked.user } : {}),
    input
  }
  return { width: asked.width, upstream, asked }
}

/** Why a batch's provider batches stop: its batch is gone or being cancelled, or its window passed. */
export const stopOf = (row: BatchRow | undefined) =>
  row === undefined || row.status === "cancelling" || row.status === "cancelled"
    ? "cancel" as const
    : row.expired_at !== null
    ? "expire" as const
    : undefined

/** One claimed step on a provider batch: its row, its batch's, and the provider's API and connection. */
export interface Step {
  readonly part: ProviderBatchRow
  readonly row: BatchRow
  readonly now: number
  readonly stop: ReturnType<typeof stopOf>
  readonly api: BatchProvider.BatchProvider
  readonly connection: EmbeddingProvider.Connection
  /** Looks again in `ms`, with what the step learnt; the claim is given back. */
  readonly later: (ms: number, changes?: Partial<Parameters<ProviderBatchStore["Service"]["update"]>[2]>) => Effect.Effect<boolean, StoreUnavailable>
}
