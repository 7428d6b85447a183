import type { BedrockClient } from "@aws-sdk/client-bedrock"
import type { S3Client } from "@aws-sdk/client-s3"
import type { EmbeddingProvider } from "@switchyard/core"
import type * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import * as BedrockAnswer from "@switchyard/core/upstream/BedrockAnswer"
import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect, Schema } from "effect"
import type * as AwsCredentials from "./AwsCredentials.ts"
import * as BatchHttp from "./BatchHttp.ts"
import * as Cohere from "./Cohere.ts"
import * as TokenEstimate from "./TokenEstimate.ts"
import * as UpstreamHttp from "./UpstreamHttp.ts"
import * as VectorEncoding from "./VectorEncoding.ts"
import * as WireFormat from "./WireFormat.ts"

/**
 * Amazon Bedrock's batch inference as a provider batch wire format, through the AWS SDK's own
 * clients and the AWS default credential chain (signing is theirs): the records' JSONL goes to
 * the provider's S3 prefix (`batch.s3_uri`) with `@aws-sdk/client-s3`; `CreateModelInvocationJob`
 * on Bedrock's control plane (`bedrock.{region}.amazonaws.com`, or `batch.base_url`) runs it as
 * the provider's service role (`batch.role_arn`), writing its output under the same prefix;
 * `GetModelInvocationJob` polls it, `StopModelInvocationJob` stops it, and the job's folder
 * (input and output) is deleted at the end. A record is `{ recordId, modelInput }`, its model
 * input what the live `InvokeModel` call sends: one record per input for Titan Text Embeddings,
 * one per 96 texts for Cohere Embed; an output record carries `modelOutput` (Titan's token count
 * with it; Cohere's none: its tokens are the gateway's estimate) or `error`.
 */

/** Bedrock's batch inference quotas: at least 100 records a job, at most 50,000, a 1 GB file. */
const limits: BatchProvider.Limits = { maxRequests: 50_000, maxInputs: 50_000, maxBytes: 1_000_000_000, minRequests: 100 }

/** Cohere Embed on Bedrock takes at most this many texts a record, as a call. */
const cohereTexts = 96

const states: Record<string, BatchProvider.State> = {
  Submitted: "pending",
  Validating: "pending",
  Scheduled: "pending",
  InProgress: "pending",
  Stopping: "cancelling",
  Completed: "completed",
  PartiallyCompleted: "completed",
  Failed: "failed",
  Stopped: "cancelled",
  Expired: "expired"
}

const TitanOutput = Schema.Struct({ embedding: VectorEncoding.FloatVector, inputTextTokenCount: Schema.optionalKey(Schema.Finite) })
const CohereOutput = Schema.Struct({
  embeddings: Schema.Union([Schema.Array(VectorEncoding.FloatVector), Schema.Struct({ float: Schema.Array(VectorEncoding.FloatVector) })])
})
const decodeTitan = UpstreamHttp.decode(TitanOutput)
const decodeCohere = UpstreamHttp.decode(CohereOutput)

const familyOf = (model: string): "titan" | "cohere" | undefined =>
  model.includes("amazon.titan-embed") ? "titan" : model.includes("cohere.embed") ? "cohere" : undefined

/** `s3://bucket/a/b` → its bucket and key. */
const s3Path = (uri: string) => {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/u.exec(uri)
  return { bucket: match?.[1] ?? "", key: match?.[2] ?? "" }
}

const prefixOf = (connection: EmbeddingProvider.Connection) => {
  const uri = connection.batch?.s3Uri
  return uri === undefined ? undefined : uri.endsWith("/") ? uri : `${uri}/`
}

const textsOf = (request: EmbeddingProvider.UpstreamRequest) =>
  request.input._tag === "Texts" ? Effect.succeed(request.input.texts) : Effect.fail(WireFormat.unsupported("Bedrock's batch inference embeds text here"))

const cohereChunks = (texts: ReadonlyArray<string>) =>
  Array.from({ length: Math.ceil(texts.length / cohereTexts) }, (_, c) => texts.slice(c * cohereTexts, (c + 1) * cohereTexts))

/** The records of a line: Titan's one per input, Cohere's one per 96 texts, as `InvokeModel` bodies. */
const modelInputs = (request: EmbeddingProvider.UpstreamRequest) =>
  Effect.gen(function*() {
    const texts = yield* textsOf(request)
    const family = familyOf(request.upstreamModel)
    if (family === "titan") {
      return texts.map((inputText) => ({
        inputText,
        ...(request.dimensions !== undefined ? { dimensions: request.dimensions } : {}),
        normalize: true,
        embeddingTypes: ["float"]
      }))
    }
    if (family === "cohere") {
      return cohereChunks(texts).map((chunk) => ({
        texts: chunk,
        input_type: Cohere.inputTypeOf(request.inputType),
        embedding_types: ["float"],
        truncate: "END",
        ...(request.dimensions !== undefined ? { output_dimension: request.dimensions } : {})
      }))
    }
    return yield* WireFormat.unsupported(`Bedrock model ${request.upstreamModel} is neither Titan Text Embeddings nor Cohere Embed`)
  })

/** An AWS SDK failure as a live call's: Bedrock's error type and status, else the service was out of reach. */
const fromAws = (cause: unknown, now: number): UpstreamError.UpstreamError => {
  const error = cause as { readonly name?: unknown; readonly message?: unknown; readonly $metadata?: { readonly httpStatusCode?: number } }
  const status = error.$metadata?.httpStatusCode
  const message = typeof error.message === "string" ? error.message.slice(0, 500) : ""
  return status === undefined || status < 400
    ? UpstreamError.unreachable(`AWS: ${message || "unreachable"}`)
    : BedrockAnswer.fromResponse({
      status,
      headers: typeof error.name === "string" ? { "x-amzn-errortype": error.name } : {},
      body: JSON.stringify({ message })
    }, now)
}

/** The default chain (environment, profile, web identity, container, instance), made on first use. */
const defaultChain = (): AwsCredentials.CredentialSource => {
  let chain: Promise<AwsCredentials.CredentialSource> | undefined
  return (options) => {
    chain ??= import("@aws-sdk/credential-providers").then(({ fromNodeProviderChain }) => fromNodeProviderChain())
    return chain.then((source) => source(options))
  }
}

interface Clients {
  readonly bedrock: BedrockClient
  readonly s3: S3Client
  readonly sdk: typeof import("@aws-sdk/client-bedrock") & typeof import("@aws-sdk/client-s3")
}

export const make = (credentials: AwsCredentials.CredentialSource = defaultChain()) =>
  Effect.sync(() => {
    // One pair of clients per region and endpoints, made on first use (the SDK is loaded then).
    const made = new Map<string, Promise<Clients>>()
    const clientsOf = (connection: EmbeddingProvider.Connection) => {
      const region = connection.region ?? "us-east-1"
      const control = connection.batch?.baseUrl ?? `https://bedrock.${region}.amazonaws.com`
      const storage = connection.batch?.storageUrl
      const key = `${region}|${control}|${storage ?? ""}`
      let clients = made.get(key)
      if (clients === undefined) {
        clients = Promise.all([import("@aws-sdk/client-bedrock"), import("@aws-sdk/client-s3")]).then(([bedrock, s3]) => ({
          sdk: { ...bedrock, ...s3 },
          bedrock: new bedrock.BedrockClient({ region, endpoint: control, credentials, maxAttempts: 1 }),
          s3: new s3.S3Client({ region, credentials, maxAttempts: 1, ...(storage !== undefined ? { endpoint: storage, forcePathStyle: true } : {}) })
        }))
        made.set(key, clients)
      }
      return clients
    }
    const call = <A>(connection: EmbeddingProvider.Connection, use: (clients: Clients) => Promise<A>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) =>
        Effect.tryPromise({ try: () => clientsOf(connection).then(use), catch: (cause) => fromAws(cause, now) }))

    const upstreamJob = (job: { readonly jobArn?: string | undefined; readonly status?: string | undefined; readonly message?: string | undefined; readonly outputDataConfig?: { readonly s3OutputDataConfig?: { readonly s3Uri?: string | undefined } | undefined } | undefined }): BatchProvider.UpstreamBatch => {
      const arn = job.jobArn ?? ""
      const output = job.outputDataConfig?.s3OutputDataConfig?.s3Uri
      const state = states[job.status ?? ""] ?? "pending"
      return {
        id: arn,
        state,
        // The job writes its records under `{output}{job id}/`, the id being the ARN's last part.
        results: output === undefined ? [] : [`${output.endsWith("/") ? output : `${output}/`}${arn.split("/").pop()}/`],
        errors: state === "failed" && job.message !== undefined ? [{ code: "failed", message: job.message }] : []
      }
    }
    const retrieve = (connection: EmbeddingProvider.Connection, id: string) =>
      call(connection, ({ bedrock, sdk }) => bedrock.send(new sdk.GetModelInvocationJobCommand({ jobIdentifier: id }))).pipe(Effect.map(upstreamJob))
    const deletePrefix = (connection: EmbeddingProvider.Connection, uri: string) =>
      call(connection, async ({ s3, sdk }) => {
        const { bucket, key } = s3Path(uri)
        const listed = await s3.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: key }))
        for (const object of listed.Contents ?? []) {
          if (object.Key !== undefined) await s3.send(new sdk.DeleteObjectCommand({ Bucket: bucket, Key: object.Key }))
        }
      })

    const provider: BatchProvider.BatchProvider = {
      limits,
      requests: (key, request) =>
        Effect.map(modelInputs(request), (inputs) => ({
          lines: inputs.map((modelInput, i) => JSON.stringify({ recordId: `${key}.${i}`, modelInput })),
          job: { model: request.upstreamModel, params: {} }
        })),
      upload: (connection, name, jsonl) =>
        Effect.gen(function*() {
          const prefix = prefixOf(connection)
          if (prefix === undefined) return yield* WireFormat.unsupported("the bedrock provider names no batch.s3_uri")
          const uri = `${prefix}${name}/input.jsonl`
          const { bucket, key } = s3Path(uri)
          yield* call(connection, ({ s3, sdk }) => s3.send(new sdk.PutObjectCommand({ Bucket: bucket, Key: key, Body: jsonl, ContentType: "application/jsonl" })))
          return uri
        }),
      create: (connection, input, job) =>
        call(connection, ({ bedrock, sdk }) =>
          bedrock.send(new sdk.CreateModelInvocationJobCommand({
            jobName: job.name,
            // The same token on a retry: Bedrock answers with the job it made, not a second.
            clientRequestToken: job.name,
            roleArn: connection.batch?.roleArn,
            modelId: job.model,
            inputDataConfig: { s3InputDataConfig: { s3Uri: input, s3InputFormat: "JSONL" } },
            outputDataConfig: { s3OutputDataConfig: { s3Uri: input.replace(/input\.jsonl$/u, "output/") } },
            timeoutDurationInHours: 24
          }))).pipe(Effect.flatMap(({ jobArn }) => retrieve(connection, jobArn ?? ""))),
      find: (connection, _input, name) =>
        call(connection, ({ bedrock, sdk }) => bedrock.send(new sdk.ListModelInvocationJobsCommand({ nameContains: name }))).pipe(
          Effect.map((listed) => {
            const found = (listed.invocationJobSummaries ?? []).find((job) => job.jobName === name)
            return found === undefined ? undefined : upstreamJob(found)
          })
        ),
      retrieve,
      cancel: (connection, id) => Effect.asVoid(call(connection, ({ bedrock, sdk }) => bedrock.send(new sdk.StopModelInvocationJobCommand({ jobIdentifier: id })))),
      results: (connection, batch) =>
        Effect.forEach(batch.results, (folder) =>
          call(connection, async ({ s3, sdk }) => {
            const { bucket, key } = s3Path(folder)
            const listed = await s3.send(new sdk.ListObjectsV2Command({ Bucket: bucket, Prefix: key }))
            const outputs = (listed.Contents ?? []).filter((o) => o.Key?.endsWith(".jsonl.out") === true)
            const texts = await Promise.all(outputs.map(async (o) =>
              (await s3.send(new sdk.GetObjectCommand({ Bucket: bucket, Key: o.Key }))).Body?.transformToString("utf-8") ?? ""
            ))
            return texts.flatMap((text) =>
              BatchHttp.jsonLines(text).flatMap((value): Array<BatchProvider.Result> => {
                if (!BatchHttp.isRecord(value) || typeof value.recordId !== "string") return []
                if (BatchHttp.isRecord(value.error)) {
                  const code = Number(value.error.errorCode)
                  return [{ customId: value.recordId, status: code >= 400 ? code : 500, body: { message: value.error.errorMessage ?? "" } }]
                }
                return [{ customId: value.recordId, status: 200, body: value.modelOutput }]
              })
            )
          })).pipe(Effect.map((files) => files.flat())),
      answer: (key, request, lookup) => answerOf(key, request, lookup),
      // The job's folder holds its input and its output: all of it goes.
      cleanup: (connection, input) => deletePrefix(connection, input.replace(/input\.jsonl$/u, ""))
    }
    return provider
  })

const answerOf = (key: string, request: EmbeddingProvider.UpstreamRequest, lookup: (customId: string) => BatchProvider.Result | undefined) =>
  Effect.gen(function*() {
    const texts = yield* textsOf(request)
    const titan = familyOf(request.upstreamModel) === "titan"
    const records = titan ? texts.length : cohereChunks(texts).length
    const keys = Array.from({ length: records }, (_, i) => `${key}.${i}`)
    let vectors: Array<VectorEncoding.RawVector>
    let counted: number | undefined
    if (titan) {
      const read = yield* BatchHttp.perRequest(keys, lookup, decodeTitan)
      if (read._tag !== "Read") return read
      vectors = read.values.map((output, index) => ({ index, value: output.embedding }))
      const counts = read.values.map((output) => output.inputTextTokenCount)
      counted = counts.every((n) => n !== undefined) ? counts.reduce<number>((sum, n) => sum + n!, 0) : undefined
    } else {
      const read = yield* BatchHttp.perRequest(keys, lookup, decodeCohere)
      if (read._tag !== "Read") return read
      vectors = read.values.flatMap((output) => Array.isArray(output.embeddings) ? output.embeddings : (output.embeddings as { readonly float: ReadonlyArray<ReadonlyArray<number>> }).float)
        .map((value, index) => ({ index, value }))
    }
    const promptTokens = counted ?? TokenEstimate.ofInput(request.input)
    const embeddings = yield* VectorEncoding.finish(request, vectors)
    const result: EmbeddingProvider.EmbeddingResult = {
      embeddings,
      promptTokens,
      totalTokens: promptTokens,
      ...(counted === undefined ? { tokensEstimated: true } : {})
    }
    return { _tag: "Served", result } satisfies BatchProvider.Answer
  })
