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

const answerOf = (code: string | undefined) => (code !== undefined ? answers[code] : undefined) ?? malformed

// The requests a route had already taken when the parser refused the rest of their bytes (a
// malformed chunked body): what they were answered, for their access lines.
const answeredByParser = new WeakMap<Http.ServerResponse, { readonly status: number; readonly message: string }>()

/**
 * What this module answered in place of `response`'s route, when the parser refused the rest of
 * the request (its route's fiber ends without answering: the client has its answer).
 */
export const parserAnswer = (response: Http.ServerResponse | undefined): { readonly status: number; readonly message: string } | undefined =>
  response === undefined ? undefined : answeredByParser.get(response)

/**
 * The raw HTTP/1.1 answer to a parser error, with `Connection: close`.
 */
const answerFor = (code: string | undefined): string => {
  const { message, reason, status } = answerOf(code)
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
  if (current != null) answeredByParser.set(current, answerOf(error.code))
  socket.end(answerFor(error.code), () => socket.destroy())
}

/**
 * A `CONNECT` (a request to open a tunnel, which Node hands to `connect` listeners instead of the
 * routes, and closes without an answer when there is none): no route of the gateway serves it,
 * so 405 in the envelope, with an empty `Allow` (RFC 9110: the target, a host and port, allows no
 * method here), then the connection closes.
 */
const onConnect = (_request: Http.IncomingMessage, socket: Stream.Duplex): void => {
  if (!socket.writable) {
    socket.destroy()
    return
  }
  const body = JSON.stringify({ error: { code: 405, message: "Method CONNECT is not served by this gateway" } })
  socket.end(
    "HTTP/1.1 405 Method Not Allowed\r\n" +
      "Allow: \r\n" +
      "Content-Type: application/json\r\n" +
      `Content-Length: ${Buffer.byteLength(body)}\r\n` +
      "Connection: close\r\n\r\n" +
      body,
    () => socket.destroy()
  )
}

/**
 * `createServer` with {@link onClientError} and {@link onConnect} installed.
 */
export const install = <S extends Http.Server>(server: S): S => {
  server.on("clientError", onClientError)
  server.on("connect", onConnect)
  return server
}
