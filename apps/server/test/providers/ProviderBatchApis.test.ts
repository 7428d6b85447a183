import { assert, describe, it } from "@effect/vitest"
import type { EmbeddingProvider } from "@switchyard/core"
import * as BatchProvider from "@switchyard/core/providers/BatchProvider"
import { Effect } from "effect"
import type { HttpClient } from "effect/http"
import * as Adapters from "../../src/providers/Adapters.ts"
import * as BedrockBatch from "../../src/providers/BedrockBatch.ts"
import * as GeminiBatch from "../../src/providers/GeminiBatch.ts"
import * as MistralBatch from "../../src/providers/MistralBatch.ts"
import * as VertexBatch from "../../src/providers/VertexBatch.ts"
import * as VoyageBatch from "../../src/providers/VoyageBatch.ts"
import * as FakeBedrockBatch from "../fakes/FakeBedrockBatch.ts"
import * as FakeGeminiBatch from "../fakes/FakeGeminiBatch.ts"
import * as FakeMistralBatch from "../fakes/FakeMistralBatch.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVertexBatch from "../fakes/FakeVertexBatch.ts"
import * as FakeVoyageBatch from "../fakes/FakeVoyageBatch.ts"
import { overHttp } from "../support/AdapterFixture.ts"
import { connection, request, texts } from "./ProviderHarness.ts"

// Each batch wire format against its provider's fake: a line's requests uploaded, the job made,
// found again by its input (or name), polled to its end, its results read back into each line's
// answer as the live adapter reads one; then its files at the provider deleted.

const awsKey = { accessKeyId: "AKIAFAKEBATCH0000001", secretAccessKey: "fake-batch-secret" }

const words = (text: string) => FakeUpstream.wordCount(text)

/** Lines of `n` texts each, their inputs numbered across lines. */
const linesOf = (lines: number, n: number, tag: string) =>
  Array.from({ length: lines }, (_, l) => Array.from({ length: n }, (_, i) => `${tag} passage ${l * n + i} of the corpus`))

const roundTrip = (
  api: BatchProvider.BatchProvider,
  to: EmbeddingProvider.Connection,
  name: string,
  requests: ReadonlyArray<EmbeddingProvider.UpstreamRequest>
) =>
  Effect.gen(function*() {
    const built = yield* Effect.forEach(requests, (r, i) => api.requests(`line-${i}`, r))
    const input = yield* api.upload(to, name, `${built.flatMap((b) => b.lines).join("\n")}\n`)
    const created = yield* api.create(to, input, { ...built[0]!.job, name })
    assert.strictEqual(created.state, "pending")
    assert.strictEqual((yield* api.find(to, input, name))?.id, created.id, "found again by its input or name")
    let job = created
    for (let i = 0; i < 10 && !BatchProvider.ended(job.state); i++) job = yield* api.retrieve(to, created.id)
    assert.strictEqual(job.state, "completed")
    const results = new Map((yield* api.results(to, job)).map((r) => [r.customId, r]))
    const answers = yield* Effect.forEach(requests, (r, i) => api.answer(`line-${i}`, r, (key) => results.get(key)))
    yield* api.cleanup(to, input, created.id)
    return answers.map((answer) => {
      assert.strictEqual(answer._tag, "Served")
      return (answer as Extract<BatchProvider.Answer, { readonly _tag: "Served" }>).result
    })
  })

const run = <A>(effect: Effect.Effect<A, unknown, HttpClient.HttpClient | import("effect").Scope.Scope>) => effect.pipe(overHttp)

describe("provider batch APIs refused a wrong credential, as their providers refuse it", () => {
  it.live("a wrong key at Mistral, Voyage and Gemini, a wrong AWS secret at S3: the upload fails for the credential", () =>
    run(Effect.gen(function*() {
      const mistral = yield* Effect.acquireRelease(Effect.promise(() => FakeMistralBatch.start()), (s) => Effect.promise(() => s.close()))
      const voyage = yield* Effect.acquireRelease(Effect.promise(() => FakeVoyageBatch.start()), (s) => Effect.promise(() => s.close()))
      const gemini = yield* Effect.acquireRelease(Effect.promise(() => FakeGeminiBatch.start()), (s) => Effect.promise(() => s.close()))
      const bedrock = yield* Effect.acquireRelease(
        Effect.promise(() => FakeBedrockBatch.start({ key: awsKey, bucket: "batch-bucket" })),
        (s) => Effect.promise(() => s.close())
      )
      const reason = <A>(effect: Effect.Effect<A, import("@switchyard/core/upstream/UpstreamError").UpstreamError>) =>
        effect.pipe(Effect.flip, Effect.map((e) => e.reason._tag))
      assert.strictEqual(yield* reason((yield* MistralBatch.make).upload(connection(mistral.url, "sk-wrong"), "x", "{}\n")), "AuthFailed")
      assert.strictEqual(yield* reason((yield* VoyageBatch.make).upload(connection(voyage.url, "pa-wrong"), "x", "{}\n")), "AuthFailed")
      // Gemini answers a wrong key with 400 API_KEY_INVALID, read as the live call's.
      const geminiRefusal = yield* (yield* GeminiBatch.make).upload(connection(gemini.url, "AIza-wrong"), "x", "{}\n").pipe(Effect.flip)
      assert.deepInclude(geminiRefusal.reason, { _tag: "InvalidRequest", upstream_status: 400, provider_code: "API_KEY_INVALID" })
      const wrongSecret = yield* BedrockBatch.make(() => Promise.resolve({ ...awsKey, secretAccessKey: "not-the-secret" }))
      const to = Adapters.connectionOf({
        slug: "amazon-bedrock",
        adapter: "bedrock",
        region: "us-east-1",
        batch: { s3_uri: "s3://batch-bucket/jobs/", role_arn: "arn:aws:iam::123456789012:role/BedrockBatch", base_url: bedrock.url, storage_url: bedrock.s3.url }
      }, undefined)
      assert.strictEqual(yield* reason(wrongSecret.upload(to, "x", "{}\n")), "AuthFailed")
      assert.strictEqual(bedrock.s3.objects.size, 0)
    })))
})

describe("provider batch APIs against their fakes", () => {
  it.live("Mistral: files, a batch job of the model, its output file; each line answered as the live call reads it; files deleted", () =>
    run(Effect.gen(function*() {
      const fake = yield* Effect.acquireRelease(Effect.promise(() => FakeMistralBatch.start()), (s) => Effect.promise(() => s.close()))
      const api = yield* MistralBatch.make
      const lines = linesOf(3, 2, "mistral")
      const answers = yield* roundTrip(api, connection(fake.url, "sk-fake", "mistral"), "job-m", lines.map((t) => request("mistral-embed", texts(...t), { dimensions: 8 })))
      for (const [l, result] of answers.entries()) {
        assert.deepStrictEqual(result.embeddings.map((e) => e.embedding), lines[l]!.map((t) => FakeUpstream.vectorFor(`mistral-embed|${t}`, 8)))
        assert.strictEqual(result.promptTokens, lines[l]!.reduce((n, t) => n + words(t), 0))
      }
      const job = [...fake.jobs.all.values()][0]!
      assert.strictEqual(job.meta.model, "mistral-embed")
      assert.strictEqual(fake.files.size, 0, "the input and output files deleted")
    })))

  it.live("Voyage: the model and parameters as request_params, each line's input alone; files deleted", () =>
    run(Effect.gen(function*() {
      const fake = yield* Effect.acquireRelease(Effect.promise(() => FakeVoyageBatch.start()), (s) => Effect.promise(() => s.close()))
      const api = yield* VoyageBatch.make
      const lines = linesOf(3, 2, "voyage")
      const answers = yield* roundTrip(api, connection(fake.url, "pa-fake"), "job-v", lines.map((t) => request("voyage-3.5", texts(...t), { inputType: "document", dimensions: 256 })))
      for (const [l, result] of answers.entries()) {
        assert.deepStrictEqual(result.embeddings.map((e) => e.embedding), lines[l]!.map((t) => FakeUpstream.vectorFor(`voyage-3.5|document|${t}`, 256)))
        assert.strictEqual(result.promptTokens, lines[l]!.reduce((n, t) => n + words(t), 0))
      }
      assert.deepStrictEqual([...fake.jobs.all.values()][0]!.meta.params, { model: "voyage-3.5", input_type: "document", output_dimension: 256 })
      assert.strictEqual(fake.files.size, 0)
    })))

  it.live("Gemini: a resumable upload, asyncBatchEmbedContent, one request per input, tokens from each response; files deleted", () =>
    run(Effect.gen(function*() {
      const fake = yield* Effect.acquireRelease(Effect.promise(() => FakeGeminiBatch.start()), (s) => Effect.promise(() => s.close()))
      const api = yield* GeminiBatch.make
      const lines = linesOf(3, 2, "gemini")
      const answers = yield* roundTrip(api, connection(fake.url, "AIza-fake"), "job-g", lines.map((t) => request("gemini-embedding-001", texts(...t), { inputType: "query", dimensions: 8 })))
      for (const [l, result] of answers.entries()) {
        assert.deepStrictEqual(
          result.embeddings.map((e) => e.embedding),
          lines[l]!.map((t) => FakeUpstream.vectorFor(`models/gemini-embedding-001|RETRIEVAL_QUERY|${JSON.stringify([{ text: t }])}`, 8))
        )
        assert.strictEqual(result.promptTokens, lines[l]!.reduce((n, t) => n + words(t), 0))
        assert.isUndefined(result.tokensEstimated)
      }
      const upload = fake.requests.filter((r) => r.path.startsWith("/upload/"))
      assert.strictEqual(upload[0]!.headers["x-goog-upload-command"], "start")
      assert.strictEqual(upload.at(-1)!.headers["x-goog-upload-command"], "upload, finalize")
      assert.strictEqual(fake.openUploads(), 0)
      assert.strictEqual(fake.files.size, 0)
    })))

  it.live("Bedrock: records in S3 and a model invocation job, both signed with SigV4 by the AWS SDK; the job's folder deleted", () =>
    run(Effect.gen(function*() {
      const fake = yield* Effect.acquireRelease(
        Effect.promise(() => FakeBedrockBatch.start({ key: awsKey, bucket: "batch-bucket" })),
        (s) => Effect.promise(() => s.close())
      )
      const api = yield* BedrockBatch.make(() => Promise.resolve(awsKey))
      const to = Adapters.connectionOf({
        slug: "amazon-bedrock",
        adapter: "bedrock",
        region: "us-east-1",
        base_url: "http://127.0.0.1:9",
        batch: { s3_uri: "s3://batch-bucket/jobs/", role_arn: "arn:aws:iam::123456789012:role/BedrockBatch", base_url: fake.url, storage_url: fake.s3.url }
      }, undefined)
      // Bedrock wants 100 records a job at least: Titan takes one input a record.
      const lines = linesOf(3, 40, "titan")
      const answers = yield* roundTrip(api, to, "job-b", lines.map((t) => request("amazon.titan-embed-text-v2:0", texts(...t), { dimensions: 256 })))
      for (const [l, result] of answers.entries()) {
        assert.deepStrictEqual(result.embeddings.map((e) => e.embedding), lines[l]!.map((t) => FakeUpstream.vectorFor(`amazon.titan-embed-text-v2:0|${t}`, 256)))
        assert.strictEqual(result.promptTokens, lines[l]!.reduce((n, t) => n + words(t), 0))
      }
      const job = [...fake.jobs.all.values()][0]!
      assert.strictEqual(job.meta.roleArn, "arn:aws:iam::123456789012:role/BedrockBatch")
      assert.strictEqual(job.meta.input, "s3://batch-bucket/jobs/job-b/input.jsonl")
      assert.strictEqual(fake.s3.objects.size, 0, "input, output and manifest deleted")
    })))

  it.live("Vertex: the input in Cloud Storage with the metadata server's token, a batchPredictionJob, predictions matched by instance; the folder deleted", () =>
    run(Effect.gen(function*() {
      const fake = yield* Effect.acquireRelease(Effect.promise(() => FakeVertexBatch.start({ bucket: "vertex-bucket" })), (s) => Effect.promise(() => s.close()))
      const saved = process.env.GCE_METADATA_HOST
      process.env.GCE_METADATA_HOST = fake.host
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          if (saved === undefined) delete process.env.GCE_METADATA_HOST
          else process.env.GCE_METADATA_HOST = saved
        })
      )
      const api = yield* VertexBatch.make
      const to = Adapters.connectionOf({
        slug: "google-vertex",
        adapter: "vertex",
        base_url: fake.url,
        project: "fake-project",
        location: "us-central1",
        batch: { gcs_uri: "gs://vertex-bucket/batches", storage_url: fake.url }
      }, undefined)
      // The same text twice, in two lines: one prediction answers both.
      const lines = [...linesOf(2, 2, "vertex"), ["vertex passage 0 of the corpus"]]
      const answers = yield* roundTrip(api, to, "job-x", lines.map((t) => request("text-embedding-005", texts(...t), { inputType: "document", dimensions: 8 })))
      for (const [l, result] of answers.entries()) {
        assert.deepStrictEqual(result.embeddings.map((e) => e.embedding), lines[l]!.map((t) => FakeUpstream.vectorFor(`text-embedding-005|RETRIEVAL_DOCUMENT|${t}`, 8)))
        assert.strictEqual(result.promptTokens, lines[l]!.reduce((n, t) => n + words(t), 0))
      }
      assert.strictEqual(fake.objects.size, 0)
      assert.strictEqual(fake.tokensIssued(), 1, "one token for the storage client and the job calls")
    })))
})
