import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import { sendBytes } from "../reliability/RawHttp.ts"
import { capturingStdout } from "../support/CapturedOutput.ts"
import { type RunningServer, startServer, storeKind } from "../support/TestServer.ts"

const bodyTimeoutMs = 300

// The head of a request and part of its body, then nothing.
const stalled = (server: RunningServer, path: string) => {
  const host = new URL(server.origin).host
  return `POST ${path} HTTP/1.1\r\nHost: ${host}\r\nAuthorization: Bearer ${server.apiKey}\r\n` +
    `Content-Type: application/json\r\nContent-Length: 200\r\n\r\n{"model": "switchyard/local-embed", "inp`
}

const until = async (ready: () => boolean, ms: number) => {
  const deadline = Date.now() + ms
  while (!ready() && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
}

describe(`a request whose body stalls (${storeKind})`, () => {
  let server: RunningServer
  beforeAll(async () => {
    server = await startServer({
      env: { SWITCHYARD_BODY_TIMEOUT_MS: String(bodyTimeoutMs), SWITCHYARD_LOG_LEVEL: "info", SWITCHYARD_LOG_FORMAT: "json" }
    })
  })
  afterAll(() => server.close())

  it("ends at its 408: its access line is written then, with the 408, not at shutdown", async () => {
    const paths = ["/api/v1/embeddings", "/api/v1/rerank", "/api/v1/keys", "/api/v1/embeddings", "/api/v1/interns"]
    const accessLines = (lines: Array<any>) => lines.filter((l) => l.message === "request")
    const { lines, result } = await capturingStdout(async (soFar) => {
      const answers = await Promise.all(paths.map((path) => sendBytes(server.origin, stalled(server, path), 10_000)))
      // Each line follows its answer once the connection has closed behind it (Node closes it
      // within half a second); without the fix none came before the server stopped.
      await until(() => accessLines(soFar()).length >= paths.length, 5_000)
      return answers
    })
    for (const [i, answer] of result.entries()) {
      assert.strictEqual(answer.status, 408, `${paths[i]}: ${answer.raw}`)
      assert.include(answer.raw, `did not arrive within ${bodyTimeoutMs} ms`)
    }
    const written = accessLines(lines)
    assert.sameMembers(written.map((l) => l.path), paths, JSON.stringify(written))
    for (const line of written) assert.strictEqual(line.status, 408, JSON.stringify(line))
  })
})
