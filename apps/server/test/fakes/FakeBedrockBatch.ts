import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import * as FakeBatchJobs from "./FakeBatchJobs.ts"
import { cohereEmbed, titan } from "./FakeBedrock.ts"
import * as FakeS3 from "./FakeS3.ts"
import * as FakeUpstream from "./FakeUpstream.ts"

/**
 * Amazon Bedrock's batch inference as its API reference describes it: the control plane
 * (`CreateModelInvocationJob` `POST /model-invocation-job`, `GetModelInvocationJob` `GET
 * /model-invocation-job/{id}`, `ListModelInvocationJobs` `GET /model-invocation-jobs`,
 * `StopModelInvocationJob` `POST /model-invocation-job/{id}/stop`, restJson, errors by
 * `x-amzn-errortype`) over an S3 of path-style addressing (FakeS3), both refusing any call not
 * signed with SigV4 (services `bedrock` and `s3`) by the key they know. A job reads its JSONL
 * records (`{ recordId, modelInput }`, at least 100, as Bedrock's quota wants) from its input
 * object, runs them through the fake runtime's models (Titan Text Embeddings v2, Cohere Embed)
 * a few at each poll, and writes `{ recordId, modelInput, modelOutput }` lines to
 * `{output}{job id}/{input name}.out` with a `manifest.json.out` when it ends. A
 * `clientRequestToken` seen before answers the job it made.
 */
export interface Options extends FakeBatchJobs.JobsOptions {
  readonly region?: string
  readonly key: FakeS3.AwsKey
  readonly bucket: string
}

interface Record_ {
  readonly recordId: string
  readonly modelInput: Record<string, unknown>
}

export interface FakeBedrockBatch {
  /** The control plane, as a provider's `batch.base_url`. */
  readonly url: string
  readonly s3: FakeS3.FakeS3
  readonly jobs: FakeBatchJobs.Jobs<Record_, string>
  readonly requests: ReadonlyArray<{ readonly method: string; readonly path: string; readonly body: unknown }>
  readonly close: () => Promise<void>
}

const states: Record<FakeBatchJobs.JobState, string> = {
  queued: "Submitted",
  running: "InProgress",
  succeeded: "Completed",
  failed: "Failed",
  expired: "Expired",
  cancelling: "Stopping",
  cancelled: "Stopped"
}

const rolePattern = /^arn:aws(-[^:]+)?:iam::([0-9]{12})?:role\/.+$/u

export const start = async (options: Options): Promise<FakeBedrockBatch> => {
  const region = options.region ?? "us-east-1"
  const s3 = await FakeS3.start({ region, key: options.key, buckets: [options.bucket] })
  const jobs = FakeBatchJobs.jobs<Record_, string>(options)
  const requests: Array<{ method: string; path: string; body: unknown }> = []
  const tokens = new Map<string, string>()
  const sockets = new Set<Socket>()

  const s3Key = (uri: string) => uri.replace(/^s3:\/\//u, "")
  const arnOf = (job: FakeBatchJobs.FakeJob<Record_, string>) => `arn:aws:bedrock:${region}:123456789012:model-invocation-job/${job.id}`
  const jobOf = (identifier: string) => jobs.all.get(decodeURIComponent(identifier).split("/").pop() ?? "")

  const described = (job: FakeBatchJobs.FakeJob<Record_, string>) => ({
    jobArn: arnOf(job),
    jobName: job.name,
    modelId: job.meta.modelId,
    clientRequestToken: job.meta.token,
    roleArn: job.meta.roleArn,
    status: states[job.state],
    ...(job.state === "failed" ? { message: "The job failed" } : {}),
    submitTime: new Date(job.createdAt).toISOString(),
    lastModifiedTime: new Date().toISOString(),
    inputDataConfig: { s3InputDataConfig: { s3InputFormat: "JSONL", s3Uri: job.meta.input } },
    outputDataConfig: { s3OutputDataConfig: { s3Uri: job.meta.output } },
    timeoutDurationInHours: job.meta.timeout
  })

  const run = (model: string) => (record: Record_) => {
    const answer = model.startsWith("amazon.titan-embed") ? titan(model, record.modelInput) : cohereEmbed(model, record.modelInput)
    return JSON.stringify("type" in answer
      ? { recordId: record.recordId, modelInput: record.modelInput, error: { errorCode: answer.status, errorMessage: answer.message } }
      : { recordId: record.recordId, modelInput: record.modelInput, modelOutput: answer.body })
  }

  // Its records' results and a manifest, under the output prefix and the job's id.
  const ended = (job: FakeBatchJobs.FakeJob<Record_, string>) => {
    if (job.state === "failed") return
    const folder = `${s3Key(String(job.meta.output)).replace(/\/?$/u, "/")}${job.id}/`
    const name = String(job.meta.input).split("/").pop()
    s3.objects.set(`${folder}${name}.out`, Buffer.from(`${job.outputs.join("\n")}\n`))
    const errors = job.outputs.filter((o) => "error" in JSON.parse(o)).length
    s3.objects.set(`${folder}manifest.json.out`, Buffer.from(JSON.stringify({
      totalRecordCount: job.requests.length,
      processedRecordCount: job.outputs.length,
      successRecordCount: job.outputs.length - errors,
      errorRecordCount: errors
    })))
  }

  const create = (body: unknown): { status: number; body: unknown; type?: string } => {
    if (!FakeUpstream.isRecord(body)) return { status: 400, type: "ValidationException", body: { message: "Malformed request" } }
    const token = typeof body.clientRequestToken === "string" ? body.clientRequestToken : undefined
    const made = token === undefined ? undefined : tokens.get(token)
    if (made !== undefined) return { status: 200, body: { jobArn: arnOf(jobs.all.get(made)!) } }
    const input = (body.inputDataConfig as { s3InputDataConfig?: { s3Uri?: unknown; s3InputFormat?: unknown } } | undefined)?.s3InputDataConfig
    const output = (body.outputDataConfig as { s3OutputDataConfig?: { s3Uri?: unknown } } | undefined)?.s3OutputDataConfig
    if (typeof body.jobName !== "string" || !/^[a-zA-Z0-9]{1,63}(-*[a-zA-Z0-9+\-.]){0,63}$/u.test(body.jobName)) {
      return { status: 400, type: "ValidationException", body: { message: "1 validation error detected: Value at 'jobName' failed to satisfy constraint" } }
    }
    if (typeof body.roleArn !== "string" || !rolePattern.test(body.roleArn)) {
      return { status: 400, type: "ValidationException", body: { message: "1 validation error detected: Value at 'roleArn' failed to satisfy constraint" } }
    }
    if (body.modelId !== "amazon.titan-embed-text-v2:0" && !String(body.modelId).startsWith("cohere.embed")) {
      return { status: 400, type: "ValidationException", body: { message: "The provided model identifier is invalid." } }
    }
    if (typeof input?.s3Uri !== "string" || input.s3InputFormat !== "JSONL" || typeof output?.s3Uri !== "string") {
      return { status: 400, type: "ValidationException", body: { message: "inputDataConfig and outputDataConfig name S3 URIs" } }
    }
    if ([...jobs.all.values()].some((j) => j.name === body.jobName)) {
      return { status: 400, type: "ValidationException", body: { message: `A job with name ${body.jobName} already exists` } }
    }
    const object = s3.objects.get(s3Key(input.s3Uri))
    if (object === undefined) return { status: 400, type: "ValidationException", body: { message: `No object at ${input.s3Uri}` } }
    const records = FakeBatchJobs.jsonLines(object.toString("utf8")) as Array<Record_>
    if (records.some((r) => typeof r.recordId !== "string" || !FakeUpstream.isRecord(r.modelInput))) {
      return { status: 400, type: "ValidationException", body: { message: "Each record needs a recordId and a modelInput" } }
    }
    if (records.length < 100) {
      return { status: 400, type: "ValidationException", body: { message: `The job has ${records.length} records; the minimum number of records per batch inference job is 100.` } }
    }
    const job = jobs.create(body.jobName, records, {
      modelId: body.modelId,
      token,
      roleArn: body.roleArn,
      input: input.s3Uri,
      output: output.s3Uri,
      timeout: body.timeoutDurationInHours ?? 24
    })
    if (token !== undefined) tokens.set(token, job.id)
    return { status: 200, body: { jobArn: arnOf(job) } }
  }

  const route = (method: string, url: URL, body: unknown): { status: number; body: unknown; type?: string } => {
    if (method === "POST" && url.pathname === "/model-invocation-job") return create(body)
    if (method === "GET" && url.pathname === "/model-invocation-jobs") {
      const name = url.searchParams.get("nameContains") ?? ""
      return { status: 200, body: { invocationJobSummaries: [...jobs.all.values()].filter((j) => j.name.includes(name)).map(described) } }
    }
    const one = /^\/model-invocation-job\/([^/]+)(\/stop)?$/u.exec(url.pathname)
    const job = one === null ? undefined : jobOf(one[1]!)
    if (job === undefined) return { status: 404, type: "ResourceNotFoundException", body: { message: "The specified job was not found" } }
    if (method === "POST" && one![2] !== undefined) {
      jobs.cancel(job)
      return { status: 200, body: {} }
    }
    if (method === "GET" && one![2] === undefined) {
      jobs.advance(job, run(String(job.meta.modelId)), ended)
      return { status: 200, body: described(job) }
    }
    return { status: 404, type: "UnknownOperationException", body: { message: "Not Found" } }
  }

  const serve = async (incoming: Http.IncomingMessage, response: Http.ServerResponse, raw: Buffer) => {
    const url = new URL(incoming.url ?? "/", "http://fake")
    const text = raw.toString("utf8")
    let body: unknown
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = undefined
    }
    requests.push({ method: incoming.method ?? "", path: url.pathname + url.search, body })
    const refused = await FakeS3.verify(incoming, raw, { service: "bedrock", region, key: options.key })
    const answer = refused !== undefined
      ? { status: refused.status, type: refused.code === "SignatureDoesNotMatch" ? "InvalidSignatureException" : "UnrecognizedClientException", body: { message: refused.message } }
      : route(incoming.method ?? "GET", url, body)
    const out = JSON.stringify(answer.body)
    response.writeHead(answer.status, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(out),
      "x-amzn-requestid": "00000000-0000-4000-8000-000000000000",
      ...(answer.type !== undefined ? { "x-amzn-errortype": `${answer.type}:http://internal.amazon.com/coral/com.amazon.bedrock/` } : {})
    })
    response.end(out)
  }

  const server = Http.createServer((incoming, response) => {
    const chunks: Array<Buffer> = []
    incoming.on("data", (chunk: Buffer) => chunks.push(chunk))
    incoming.on("end", () => void serve(incoming, response, Buffer.concat(chunks)).catch(() => response.socket?.destroy()))
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => resolve((server.address() as AddressInfo).port))
  })
  return {
    url: `http://127.0.0.1:${port}`,
    s3,
    jobs,
    requests,
    close: async () => {
      await s3.close()
      await new Promise<void>((done) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => done())
      })
    }
  }
}
