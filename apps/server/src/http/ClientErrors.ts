import type * as Http from "node:http"
import type * as Stream from "node:stream"

/**
 * The answers to bytes Node's HTTP parser refuses before any route sees them (not HTTP at all,
 * a malformed request line or header, conflicting lengths, headers over the size limit, a request
 * that took too long to arrive): Node's default is a bare status line; these carry the spec's
 * error envelope.
 */
const answers: Readonly<Record<string, { readonly status: number; readonly reason: string; readonly message: string }>> = {
  HPE_HEADER_OVERFLOW: {
    status: 431,
    reason: "Request Header Fields Too Large",
    message: "Request header fields too large"
  },
  ERR_HTTP_REQUEST_TIMEOUT: { status: 408, reason: "Request Timeout", message: "The request timed out" }
}

const malformed = {
  status: 400,
  reason: "Bad Request",
  message: "Invalid request: the bytes received are not a well-formed HTTP/1.1 request"
}

/**
 * The raw HTTP/1.1 answer to a parser error, with `Connection: close`.
 */
const answerFor = (code: string | undefined): string => {
  const { message, reason, status } = (code !== undefined ? answers[code] : undefined) ?? malformed
  const body = JSON.stringify({ error: { code: status, message } })
  return `HTTP/1.1 ${status} ${reason}\r\n` +
    "Content-Type: application/json\r\n" +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    "Connection: close\r\n\r\n" +
    body
}

/**
 * A `clientError` listener: answers in the envelope when the socket can still take an answer
 * (nothing of a response was sent on it), then closes it. A reset connection is just closed.
 */
const onClientError = (error: Error & { readonly code?: string }, socket: Stream.Duplex): void => {
  const current = (socket as { readonly _httpMessage?: Http.ServerResponse | null })._httpMessage
  if (error.code === "ECONNRESET" || !socket.writable || (current?.headersSent)) {
    socket.destroy()
    return
  }
  socket.end(answerFor(error.code), () => socket.destroy())
}

/**
 * `createServer` with {@link onClientError} installed.
 */
export const install = <S extends Http.Server>(server: S): S => {
  server.on("clientError", onClientError)
  return server
}
