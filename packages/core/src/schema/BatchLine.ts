/**
 * One line of a batch: the input line read, and the output and error lines written, in OpenAI's
 * formats.
 *
 * **Details**
 *
 * Input: `{ "custom_id", "method": "POST", "url", "body" }`, where `url` is the batch's endpoint
 * (`/v1/embeddings` also written `/api/v1/embeddings`; likewise `/v1/rerank`). Output:
 * `{ "id", "custom_id", "response": { "status_code", "request_id", "body" }, "error": null }`,
 * `request_id` being the line's generation id. Error: `{ "id", "custom_id", "response": null,
 * "error": { "code", "message" } }`, where `code` is the status the live endpoint answers with
 * (400 for a line that is not a request at all).
 *
 * **Gotchas**
 *
 * A line that is not JSON, or not an input line, is an error line (its number in the message),
 * not a failed batch: only a file with no JSON line at all fails validation.
 *
 * @since 0.4.0
 */
import type { Endpoint } from "./Batch.ts"

/**
 * An input line read: what to call, and the `custom_id` its answer carries.
 *
 * @since 0.4.0
 */
export interface Request {
  readonly customId: string
  readonly body: unknown
}

/**
 * Why a line is not a request: a message for its error line, and its `custom_id` when it had one.
 *
 * @since 0.4.0
 */
export interface Invalid {
  readonly customId: string | null
  readonly message: string
}

const urls: Record<Endpoint, ReadonlyArray<string>> = {
  "/v1/embeddings": ["/v1/embeddings", "/api/v1/embeddings"],
  "/v1/rerank": ["/v1/rerank", "/api/v1/rerank"]
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * A line's `custom_id` as validation reads it: `undefined` when the line is not a JSON object,
 * `null` when it is one without a string `custom_id`.
 *
 * @since 0.4.0
 */
export const customIdOf = (text: string): string | null | undefined => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return undefined
  }
  if (!isRecord(value)) return undefined
  return typeof value.custom_id === "string" ? value.custom_id : null
}

/**
 * Reads input line number `line` (1-based) of a batch on `endpoint`.
 *
 * @since 0.4.0
 */
export const parse = (text: string, line: number, endpoint: Endpoint): { readonly _tag: "Request"; readonly request: Request } | {
  readonly _tag: "Invalid"
  readonly invalid: Invalid
} => {
  const invalid = (message: string, customId: string | null = null) => ({ _tag: "Invalid" as const, invalid: { customId, message } })
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return invalid(`Line ${line} is not valid JSON`)
  }
  if (!isRecord(value)) return invalid(`Line ${line} is not a JSON object`)
  const customId = typeof value.custom_id === "string" && value.custom_id.length > 0 ? value.custom_id : null
  if (customId === null) return invalid(`Line ${line}: custom_id must be a non-empty string`)
  if (value.method !== "POST") return invalid(`Line ${line}: method must be "POST"`, customId)
  if (typeof value.url !== "string" || !urls[endpoint].includes(value.url)) {
    return invalid(`Line ${line}: url must be the batch's endpoint, ${endpoint}`, customId)
  }
  if (!isRecord(value.body)) return invalid(`Line ${line}: body must be a JSON object`, customId)
  return { _tag: "Request", request: { customId, body: value.body } }
}

/**
 * An output line: the live endpoint's answer (its JSON text as served) under `response.body`.
 *
 * @since 0.4.0
 */
export const outputLine = (id: string, customId: string, requestId: string, bodyJson: string): string =>
  `{"id":${JSON.stringify(id)},"custom_id":${JSON.stringify(customId)},"response":{"status_code":200,"request_id":${
    JSON.stringify(requestId)
  },"body":${bodyJson}},"error":null}`

/**
 * An error line: the status the live endpoint would answer with, and its message.
 *
 * @since 0.4.0
 */
export const errorLine = (id: string, customId: string | null, status: number, message: string): string =>
  JSON.stringify({ id, custom_id: customId, response: null, error: { code: status, message } })

/**
 * The error line of a request not run before the batch's completion window passed, as OpenAI
 * writes it (`code` `batch_expired`).
 *
 * @since 0.4.0
 */
export const expiredLine = (id: string, customId: string | null): string =>
  JSON.stringify({
    id,
    custom_id: customId,
    response: null,
    error: { code: "batch_expired", message: "This request could not be executed before the completion window expired." }
  })
