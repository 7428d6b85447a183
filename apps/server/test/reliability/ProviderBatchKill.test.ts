import { afterAll, assert, describe, it } from "@effect/vitest"
import { nanosFromCredits } from "@switchyard/core/accounting/UsageWindow"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import { toFile } from "openai"
import * as FakeBedrockBatch from "../fakes/FakeBedrockBatch.ts"
import * as FakeGeminiBatch from "../fakes/FakeGeminiBatch.ts"
import * as FakeMistralBatch from "../fakes/FakeMistralBatch.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVertexBatch from "../fakes/FakeVertexBatch.ts"
import * as FakeVoyageBatch from "../fakes/FakeVoyageBatch.ts"
import { type Books, booksOnPostgres, booksOnSqlite, gateways, kill, until } from "../support/BatchGateways.ts"
import { dropDatabase, freshDatabase, postgresReachable, tempDir } from "../support/TestServer.ts"
import { level } from "./Reliability.ts"

// Each provider batch API end to end, through the built gateway (`node dist/main.mjs`): the
// `openai` SDK uploads a 5,000-line file and makes a batch; its lines go to the provider's batch
// jobs (the fake sees jobs, no live call); the gateway is killed with SIGKILL while they run at
// the provider, and started again on the same store: it polls the same jobs (none submitted
// twice), the batch completes with every custom_id once and the fake's vectors, each line charged
// once at the batch price times the tokens the fake reported, to the nano-dollar; the files it
// uploaded are deleted at the provider. `pnpm test` runs Gemini's on the embedded store;
// `pnpm test:reliability` all five, on the embedded store and on PostgreSQL.

const lines = 5_000
const unitLines = 1_000
/** 1.5 USD per million tokens live, 0.75 in a batch: 750 nano-dollars a token. */
const batchNanosPerToken = 750n
const pgReachable = await postgresReachable()

const awsKey = { accessKeyId: "AKIAFAKEBATCHKILL001", secretAccessKey: "fake-batch-kill-secret" }

/** A provider's batch API faked: its config entry, the gateway's environment for it, and what the fake saw. */
interface Fake {
  readonly provider: Record<string, unknown>
  readonly env: Record<string, string>
  readonly dimensions: number
  readonly vector: (text: string) => ReadonlyArray<number>
  readonly jobsMade: () => number
  readonly jobsRunning: () => number
  readonly pause: (paused: boolean) => void
  /** Calls of the provider's live embeddings API. */
  readonly liveCalls: () => number
  /** Files or objects left at the provider. */
  readonly left: () => number
  readonly close: () => Promise<void>
}

const endpoint = (upstream: string, dimensions: number) => ({
  model: "acme/embed",
  upstream_model: upstream,
  pricing: { prompt: "1.5", batch: { prompt: "0.75" } },
  dimensions,
  supported_parameters: ["dimensions"],
  max_batch_items: 64
})

const running = (all: ReadonlyMap<string, { readonly state: string }>) => [...all.values()].filter((j) => j.state === "running").length
const livePosts = (fake: FakeUpstream.FakeServer, path: RegExp) => fake.requests.filter((r) => r.method === "POST" && path.test(r.path)).length

const subjects: Record<string, () => Promise<Fake>> = {
  mistral: async () => {
    const fake = await FakeMistralBatch.start()
    return {
      provider: { slug: "mistral", name: "Mistral", adapter: "openai", dialect: "mistral", base_url: fake.url, api_key_env: "MISTRAL_KEY", data_collection: "deny", endpoints: [endpoint("mistral-embed", 8)] },
      env: { MISTRAL_KEY: "sk-fake" },
      dimensions: 8,
      vector: (text) => FakeUpstream.vectorFor(`mistral-embed|${text}`, 8),
      jobsMade: () => fake.jobs.all.size,
      jobsRunning: () => running(fake.jobs.all),
      pause: fake.jobs.pause,
      liveCalls: () => livePosts(fake, /^\/v1\/embeddings/u),
      left: () => fake.files.size,
      close: fake.close
    }
  },
  voyage: async () => {
    const fake = await FakeVoyageBatch.start()
    return {
      provider: { slug: "voyage", name: "Voyage", adapter: "voyage", base_url: fake.url, api_key_env: "VOYAGE_KEY", data_collection: "deny", endpoints: [endpoint("voyage-3.5", 8)] },
      env: { VOYAGE_KEY: "pa-fake" },
      dimensions: 8,
      vector: (text) => FakeUpstream.vectorFor(`voyage-3.5||${text}`, 8),
      jobsMade: () => fake.jobs.all.size,
      jobsRunning: () => running(fake.jobs.all),
      pause: fake.jobs.pause,
      liveCalls: () => livePosts(fake, /^\/v1\/embeddings/u),
      left: () => fake.files.size,
      close: fake.close
    }
  },
  gemini: async () => {
    const fake = await FakeGeminiBatch.start()
    return {
      provider: { slug: "gemini", name: "Gemini", adapter: "gemini", base_url: fake.url, api_key_env: "GEMINI_KEY", data_collection: "deny", endpoints: [endpoint("gemini-embedding-001", 8)] },
      env: { GEMINI_KEY: "AIza-fake" },
      dimensions: 8,
      vector: (text) => FakeUpstream.vectorFor(`models/gemini-embedding-001||${JSON.stringify([{ text }])}`, 8),
      jobsMade: () => fake.jobs.all.size,
      jobsRunning: () => running(fake.jobs.all),
      pause: fake.jobs.pause,
      liveCalls: () => livePosts(fake, /:batchEmbedContents$/u),
      left: () => fake.files.size,
      close: fake.close
    }
  },
  bedrock: async () => {
    const fake = await FakeBedrockBatch.start({ key: awsKey, bucket: "kill-bucket" })
    return {
      provider: {
        slug: "bedrock",
        name: "Bedrock",
        adapter: "bedrock",
        region: "us-east-1",
        base_url: "http://127.0.0.1:9",
        data_collection: "deny",
        batch: { s3_uri: "s3://kill-bucket/batches/", role_arn: "arn:aws:iam::123456789012:role/BedrockBatch", base_url: fake.url, storage_url: fake.s3.url },
        endpoints: [endpoint("amazon.titan-embed-text-v2:0", 256)]
      },
      env: {
        AWS_ACCESS_KEY_ID: awsKey.accessKeyId,
        AWS_SECRET_ACCESS_KEY: awsKey.secretAccessKey,
        AWS_SESSION_TOKEN: "",
        AWS_CONFIG_FILE: "/nonexistent/aws-config",
        AWS_SHARED_CREDENTIALS_FILE: "/nonexistent/aws-credentials",
        AWS_EC2_METADATA_DISABLED: "true"
      },
      dimensions: 256,
      vector: (text) => FakeUpstream.vectorFor(`amazon.titan-embed-text-v2:0|${text}`, 256),
      jobsMade: () => fake.jobs.all.size,
      jobsRunning: () => running(fake.jobs.all),
      pause: fake.jobs.pause,
      // The runtime at base_url is no server: a live call would fail the line.
      liveCalls: () => 0,
      left: () => fake.s3.objects.size,
      close: fake.close
    }
  },
  vertex: async () => {
    const fake = await FakeVertexBatch.start({ bucket: "kill-bucket" })
    return {
      provider: {
        slug: "vertex",
        name: "Vertex",
        adapter: "vertex",
        base_url: fake.url,
        project: "fake-project",
        location: "us-central1",
        data_collection: "deny",
        batch: { gcs_uri: "gs://kill-bucket/batches/", storage_url: fake.url },
        endpoints: [endpoint("text-embedding-005", 8)]
      },
      env: { GCE_METADATA_HOST: fake.host },
      dimensions: 8,
      vector: (text) => FakeUpstream.vectorFor(`text-embedding-005||${text}`, 8),
      jobsMade: () => fake.jobs.all.size,
      jobsRunning: () => running(fake.jobs.all),
      pause: fake.jobs.pause,
      liveCalls: () => livePosts(fake, /:predict$/u),
      left: () => fake.objects.size,
      close: fake.close
    }
  }
}

const textOf = (i: number) => `passage ${i} of the indexed corpus`

const input = (dimensions: number) =>
  Array.from({ length: lines }, (_, i) =>
    JSON.stringify({ custom_id: `k${i}`, method: "POST", url: "/v1/embeddings", body: { model: "acme/embed", input: textOf(i), dimensions } }))
    .join("\n")

const { start, killAll, topUp, activity } = gateways({
  SWITCHYARD_PROVIDER_BATCH_POLL_MS: "200",
  SWITCHYARD_BATCH_UNIT_LINES: String(unitLines)
})

afterAll(() => killAll())

const scenario = async (name: string, store: (config: string) => { readonly env: Record<string, string>; readonly books: () => Promise<Books> }) => {
  const fake = await subjects[name]!()
  try {
    const path = NodePath.join(tempDir("config"), "switchyard.json")
    Fs.writeFileSync(path, JSON.stringify({ providers: [fake.provider] }))
    const { env: storeEnv, books } = store(path)
    const env = { ...fake.env, ...storeEnv, SWITCHYARD_CONFIG: path }
    fake.pause(true)
    const first = await start(env)
    await topUp(first)
    const file = await first.client.files.create({ file: await toFile(Buffer.from(input(fake.dimensions)), "corpus.jsonl"), purpose: "batch" })
    const created = await first.client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
    // Units of about 1,000 lines (cut at the stored file's chunks too): a job each, every job
    // submitted and polled (running at the provider, nothing served yet) before the kill.
    type Jobs = { readonly provider_jobs: ReadonlyArray<{ readonly status: string; readonly lines: number }> }
    const midway = await until(
      async () => (await first.client.batches.retrieve(created.id)) as unknown as Jobs,
      (b) =>
        b.provider_jobs.reduce((n, j) => n + j.lines, 0) === lines && b.provider_jobs.every((j) => j.status === "in_progress") &&
        fake.jobsRunning() === b.provider_jobs.length,
      120_000
    )
    const jobs = midway.provider_jobs.length
    assert.isAtLeast(jobs, lines / unitLines)
    await kill(first)
    fake.pause(false)
    const second = await start(env)
    const done = await until(() => second.client.batches.retrieve(created.id), (b) => b.status === "completed" || b.status === "failed", 180_000)
    assert.deepStrictEqual(done.request_counts, { total: lines, completed: lines, failed: 0 })
    assert.strictEqual(fake.jobsMade(), jobs, "no job submitted twice")
    assert.strictEqual(fake.liveCalls(), 0, "no live call")
    const output = (await (await second.client.files.content(done.output_file_id!)).text()).trim().split("\n").map((l) => JSON.parse(l))
    assert.strictEqual(output.length, lines)
    assert.strictEqual(new Set(output.map((o) => o.custom_id)).size, lines, "every custom_id once")
    let tokens = 0
    for (const o of output) {
      const i = Number(String(o.custom_id).slice(1))
      const usage = o.response.body.usage
      assert.deepStrictEqual(o.response.body.data[0].embedding, fake.vector(textOf(i)))
      assert.strictEqual(usage.prompt_tokens, FakeUpstream.wordCount(textOf(i)), "the fake's reported tokens")
      assert.strictEqual(nanosFromCredits(usage.cost), BigInt(usage.prompt_tokens) * batchNanosPerToken, "the batch price, exactly")
      tokens += usage.prompt_tokens
    }
    const lineNanos = output.reduce((n, o) => n + nanosFromCredits(o.response.body.usage.cost)!, 0n)
    assert.strictEqual(lineNanos, BigInt(tokens) * batchNanosPerToken)
    assert.strictEqual(await activity(second, (usage) => nanosFromCredits(usage)!), lineNanos, "/activity's cost is the output lines'")
    // The files the gateway uploaded, and the provider's results, deleted there once the batch ended.
    await until(async () => fake.left(), (n) => n === 0, 30_000)
    await second.process.stop()
    const ledger = await books()
    assert.deepStrictEqual(ledger, { rows: lines, distinct: lines, nanos: lineNanos }, "each line charged once")
  } finally {
    killAll()
    await fake.close()
  }
}

const sqlite = (label: string) => () => {
  const dataDir = tempDir(`provider-batch-kill-${label}`)
  return { env: { SWITCHYARD_DATA_DIR: dataDir, DATABASE_URL: "" }, books: () => booksOnSqlite(dataDir) }
}

const postgres = (databaseUrl: string, label: string) => () => ({
  env: { DATABASE_URL: databaseUrl, SWITCHYARD_DATA_DIR: tempDir(`provider-batch-kill-pg-${label}`), SWITCHYARD_BATCH_LEASE_MS: "3000" },
  books: () => booksOnPostgres(databaseUrl)
})

const providers = level === "full" ? Object.keys(subjects) : ["gemini"]

describe("provider batch APIs: 5,000 lines, kill -9 while their jobs run, restart", () => {
  for (const name of providers) {
    it(`${name}: embedded store`, () => scenario(name, sqlite(name)), 360_000)
    it.skipIf(!pgReachable || level !== "full")(`${name}: PostgreSQL`, async () => {
      const databaseUrl = await freshDatabase()
      try {
        await scenario(name, postgres(databaseUrl, name))
      } finally {
        await dropDatabase(databaseUrl)
      }
    }, 360_000)
  }
})
