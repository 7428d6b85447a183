import { Sha256 } from "@aws-crypto/sha256-js"
import { SignatureV4 } from "@smithy/signature-v4"
import * as Crypto from "node:crypto"
import * as Http from "node:http"
import type { AddressInfo, Socket } from "node:net"

/**
 * What AWS checks of a call, and an S3 of path-style addressing (`/{bucket}/{key}`) as its API
 * reference describes it: `PutObject`, `GetObject`, `DeleteObject` and `ListObjectsV2`, each
 * refused unless signed with SigV4 for service `s3` in the fake's region by a key it knows,
 * errors as S3's XML. The fakes of Bedrock's batch inference keep their jobs' input and output
 * here.
 */

export interface AwsKey {
  readonly accessKeyId: string
  readonly secretAccessKey: string
}

export interface Refusal {
  readonly status: number
  readonly code: string
  readonly message: string
}

const authPattern = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/u

const amzDate = (value: string): Date | undefined => {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/u.exec(value)
  return m === null ? undefined : new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!))
}

/**
 * Recomputes a call's SigV4 signature with the secret of the key it names: `undefined` when it
 * matches (and the payload hash it signed is the body's), else the refusal AWS answers.
 */
export const verify = async (
  incoming: Http.IncomingMessage,
  raw: Buffer,
  expected: { readonly service: string; readonly region: string; readonly key: AwsKey }
): Promise<Refusal | undefined> => {
  const m = authPattern.exec(incoming.headers.authorization ?? "")
  if (m === null) return { status: 403, code: "MissingAuthenticationToken", message: "Missing Authentication Token" }
  const [, accessKeyId, , region, service, signedHeaders, signature] = m
  if (accessKeyId !== expected.key.accessKeyId) return { status: 403, code: "InvalidAccessKeyId", message: "The AWS Access Key Id you provided does not exist in our records." }
  const date = amzDate(String(incoming.headers["x-amz-date"] ?? ""))
  if (region !== expected.region || service !== expected.service || date === undefined) {
    return { status: 403, code: "SignatureDoesNotMatch", message: "Credential should be scoped to a valid region and service." }
  }
  const hash = incoming.headers["x-amz-content-sha256"]
  if (typeof hash === "string" && hash !== "UNSIGNED-PAYLOAD" && hash !== Crypto.createHash("sha256").update(raw).digest("hex")) {
    return { status: 400, code: "XAmzContentSHA256Mismatch", message: "The provided 'x-amz-content-sha256' header does not match what was computed." }
  }
  const url = new URL(incoming.url ?? "/", "http://fake")
  const query: Record<string, string> = {}
  for (const [name, value] of url.searchParams) query[name] = value
  const headers: Record<string, string> = {}
  for (const name of signedHeaders!.split(";")) headers[name] = String(incoming.headers[name] ?? "")
  const signer = new SignatureV4({
    service: expected.service,
    region: expected.region,
    credentials: expected.key,
    sha256: Sha256,
    // S3 signs its paths as sent; the other services escape them once more.
    uriEscapePath: expected.service !== "s3"
  })
  const signed = await signer.sign({
    method: incoming.method ?? "GET",
    protocol: "http:",
    hostname: String(incoming.headers.host ?? "").split(":")[0]!,
    path: url.pathname,
    query,
    headers,
    body: raw
  }, { signingDate: date, signableHeaders: new Set(signedHeaders!.split(";")) })
  return String(signed.headers.authorization ?? "").endsWith(`Signature=${signature}`)
    ? undefined
    : { status: 403, code: "SignatureDoesNotMatch", message: "The request signature we calculated does not match the signature you provided." }
}

export interface FakeS3 {
  /** The endpoint, as a provider's `batch.storage_url`. */
  readonly url: string
  /** The objects stored, by `bucket/key`. */
  readonly objects: Map<string, Buffer>
  readonly requests: ReadonlyArray<{ readonly method: string; readonly path: string }>
  readonly close: () => Promise<void>
}

const xmlEscape = (text: string) => text.replace(/&/gu, "&amp;").replace(/</gu, "&lt;").replace(/>/gu, "&gt;")

const xml = (response: Http.ServerResponse, status: number, body: string) => {
  const text = `<?xml version="1.0" encoding="UTF-8"?>\n${body}`
  response.writeHead(status, { "content-type": "application/xml", "content-length": Buffer.byteLength(text) })
  response.end(text)
}

const refuse = (response: Http.ServerResponse, refusal: Refusal) =>
  xml(response, refusal.status, `<Error><Code>${refusal.code}</Code><Message>${xmlEscape(refusal.message)}</Message><RequestId>fake</RequestId></Error>`)

/** Listens as S3 with path-style addressing, on its own port. */
export const start = (options: { readonly region: string; readonly key: AwsKey; readonly buckets: ReadonlyArray<string> }): Promise<FakeS3> => {
  const objects = new Map<string, Buffer>()
  const requests: Array<{ method: string; path: string }> = []
  const sockets = new Set<Socket>()

  const serve = async (incoming: Http.IncomingMessage, response: Http.ServerResponse, raw: Buffer) => {
    const url = new URL(incoming.url ?? "/", "http://fake")
    requests.push({ method: incoming.method ?? "", path: url.pathname + url.search })
    const refused = await verify(incoming, raw, { service: "s3", region: options.region, key: options.key })
    if (refused !== undefined) return refuse(response, refused)
    const [, bucket = "", ...rest] = url.pathname.split("/")
    const key = rest.map(decodeURIComponent).join("/")
    if (!options.buckets.includes(bucket)) return refuse(response, { status: 404, code: "NoSuchBucket", message: "The specified bucket does not exist" })
    if (incoming.method === "GET" && key === "" && url.searchParams.get("list-type") === "2") {
      const prefix = url.searchParams.get("prefix") ?? ""
      const keys = [...objects.keys()].filter((k) => k.startsWith(`${bucket}/${prefix}`)).map((k) => k.slice(bucket.length + 1)).sort()
      const contents = keys.map((k) =>
        `<Contents><Key>${xmlEscape(k)}</Key><LastModified>2026-01-01T00:00:00.000Z</LastModified><ETag>"${
          Crypto.createHash("md5").update(objects.get(`${bucket}/${k}`)!).digest("hex")
        }"</ETag><Size>${objects.get(`${bucket}/${k}`)!.byteLength}</Size><StorageClass>STANDARD</StorageClass></Contents>`
      ).join("")
      return xml(response, 200, `<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${bucket}</Name><Prefix>${xmlEscape(prefix)}</Prefix><KeyCount>${keys.length}</KeyCount><MaxKeys>1000</MaxKeys><IsTruncated>false</IsTruncated>${contents}</ListBucketResult>`)
    }
    const stored = objects.get(`${bucket}/${key}`)
    switch (incoming.method) {
      case "PUT": {
        objects.set(`${bucket}/${key}`, raw)
        response.writeHead(200, { etag: `"${Crypto.createHash("md5").update(raw).digest("hex")}"`, "content-length": 0 })
        return response.end()
      }
      case "GET":
        if (stored === undefined) return refuse(response, { status: 404, code: "NoSuchKey", message: "The specified key does not exist." })
        response.writeHead(200, { "content-type": "application/octet-stream", "content-length": stored.byteLength })
        return response.end(stored)
      case "DELETE":
        objects.delete(`${bucket}/${key}`)
        response.writeHead(204)
        return response.end()
      default:
        return refuse(response, { status: 405, code: "MethodNotAllowed", message: "The specified method is not allowed against this resource." })
    }
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
  return new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as AddressInfo
      resolve({
        url: `http://127.0.0.1:${port}`,
        objects,
        requests,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  })
}
