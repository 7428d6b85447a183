import { afterAll, assert, describe, it } from "@effect/vitest"
import { GoogleGenAI, JobState } from "@google/genai"
import { Mistral } from "@mistralai/mistralai"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import OpenAI, { toFile } from "openai"
import * as FakeGeminiBatch from "../fakes/FakeGeminiBatch.ts"
import * as FakeMistralBatch from "../fakes/FakeMistralBatch.ts"
import * as FakeUpstream from "../fakes/FakeUpstream.ts"
import * as FakeVoyageBatch from "../fakes/FakeVoyageBatch.ts"
import { tempDir } from "../support/TestServer.ts"

// The fakes of the batch APIs driven by the providers' own SDKs (Google's `@google/genai`,
// Mistral's `@mistralai/mistralai`, and the `openai` SDK, which Voyage documents for its Files and
// Batch API): their wire shapes are the SDKs', not only the gateway adapters'. Bedrock's and
// Vertex's fakes are driven by the AWS SDK's and Google's storage clients in the adapter tests.

const servers: Array<{ readonly close: () => Promise<void> }> = []
afterAll(async () => {
  for (const server of servers) await server.close()
})

const jsonLines = (text: string) => text.split("\n").filter((l) => l.trim() !== "").map((l) => JSON.parse(l))

describe("the batch fakes accept the providers' own SDKs", () => {
  it("Gemini: files.upload (resumable), batches.createEmbeddings, batches.get, files.download", async () => {
    const fake = await FakeGeminiBatch.start()
    servers.push(fake)
    // The gateway's Gemini providers speak v1beta (the built-in base URL's); the SDK is told so.
    const ai = new GoogleGenAI({ apiKey: "AIza-fake", apiVersion: "v1beta", httpOptions: { baseUrl: fake.url.replace(/\/v1beta$/u, "") } })
    const requests = ["a first text", "a second text"].map((text, i) => ({
      key: `k${i}`,
      request: { model: "models/gemini-embedding-001", content: { parts: [{ text }] }, outputDimensionality: 4 }
    }))
    const file = await ai.files.upload({
      file: new Blob([requests.map((r) => JSON.stringify(r)).join("\n")], { type: "application/jsonl" }),
      config: { mimeType: "application/jsonl", displayName: "sdk-input" }
    })
    const job = await ai.batches.createEmbeddings({ model: "gemini-embedding-001", src: { fileName: file.name! }, config: { displayName: "sdk-job" } })
    let state = await ai.batches.get({ name: job.name! })
    for (let i = 0; i < 5 && state.state !== JobState.JOB_STATE_SUCCEEDED; i++) state = await ai.batches.get({ name: job.name! })
    assert.strictEqual(state.state, JobState.JOB_STATE_SUCCEEDED)
    const path = NodePath.join(tempDir("gemini-sdk"), "responses.jsonl")
    await ai.files.download({ file: state.dest!.fileName!, downloadPath: path })
    const lines = jsonLines(Fs.readFileSync(path, "utf8"))
    assert.deepStrictEqual(lines.map((l) => l.key), ["k0", "k1"])
    assert.deepStrictEqual(
      lines[1].response.embedding.values,
      FakeUpstream.vectorFor(`models/gemini-embedding-001||${JSON.stringify([{ text: "a second text" }])}`, 4)
    )
    assert.strictEqual(lines[1].response.tokenCount, "3")
  })

  it("Mistral: files.upload, batch.jobs.create, batch.jobs.get, files.download", async () => {
    const fake = await FakeMistralBatch.start()
    servers.push(fake)
    const client = new Mistral({ apiKey: "sk-fake", serverURL: fake.url.replace(/\/v1$/u, "") })
    const input = [{ custom_id: "0", body: { input: ["a first text"] } }, { custom_id: "1", body: { input: ["a second text"] } }]
    const uploaded = await client.files.upload({
      file: { fileName: "input.jsonl", content: Buffer.from(input.map((l) => JSON.stringify(l)).join("\n")) },
      purpose: "batch"
    })
    let job = await client.batch.jobs.create({ inputFiles: [uploaded.id], endpoint: "/v1/embeddings", model: "mistral-embed", metadata: { switchyard_job: "sdk" } })
    for (let i = 0; i < 5 && job.status !== "SUCCESS"; i++) job = await client.batch.jobs.get({ jobId: job.id })
    assert.strictEqual(job.status, "SUCCESS")
    const stream = await client.files.download({ fileId: job.outputFile! })
    const lines = jsonLines(await new Response(stream).text())
    assert.sameMembers(lines.map((l) => l.custom_id), ["0", "1"])
    const second = lines.find((l) => l.custom_id === "1")
    assert.strictEqual(second.response.status_code, 200)
    assert.deepStrictEqual(second.response.body.data[0].embedding, FakeUpstream.vectorFor("mistral-embed|a second text", 16))
  })

  it("Voyage: the openai SDK's files.create and batches.create with request_params, batches.retrieve, files.content", async () => {
    const fake = await FakeVoyageBatch.start()
    servers.push(fake)
    const client = new OpenAI({ apiKey: "pa-fake", baseURL: fake.url, maxRetries: 0 })
    const file = await client.files.create({
      file: await toFile(Buffer.from(`${JSON.stringify({ custom_id: "c0", body: { input: ["a first text"] } })}\n`), "input.jsonl"),
      purpose: "batch"
    })
    const created = await client.batches.create({
      input_file_id: file.id,
      endpoint: "/v1/embeddings",
      completion_window: "12h" as "24h",
      // @ts-expect-error: Voyage's field, beside OpenAI's
      request_params: { model: "voyage-3.5", input_type: "document" }
    })
    let batch = created
    for (let i = 0; i < 5 && batch.status !== "completed"; i++) batch = await client.batches.retrieve(created.id)
    assert.strictEqual(batch.status, "completed")
    const lines = jsonLines(await (await client.files.content(batch.output_file_id!)).text())
    assert.deepStrictEqual(lines[0].response.body.data[0].embedding, FakeUpstream.vectorFor("voyage-3.5|document|a first text", 1024))
  })
})
