import { assert, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Os from "node:os"
import * as NodePath from "node:path"
import * as ClientErrors from "../../src/http/ClientErrors.ts"
import { startServerProcess } from "../support/ServerProcess.ts"
import { sendBytes } from "./RawHttp.ts"

const listen = async () => {
  const server = ClientErrors.install(Http.createServer((_, response) => {
    response.writeHead(200, { "content-type": "application/json", "content-length": "2" })
    response.end("{}")
  }))
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    origin: `http://127.0.0.1:${port}`,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    })
  }
}

const envelopeOf = (raw: string) => JSON.parse(raw.slice(raw.indexOf("\r\n\r\n") + 4))

describe("reliability: bytes Node's parser refuses", () => {
  it("garbage and malformed requests get a 400 in the envelope and a closed connection", async () => {
    const server = await listen()
    try {
      for (
        const bytes of [
          "GARBAGE\r\n\r\n",
          "\x00\x01\x02\x03\r\n\r\n",
          "POST /api/v1/embeddings HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab",
          "GET /api/v1/health HTTP/1.1\r\nHo st: x\r\n\r\n"
        ]
      ) {
        const answer = await sendBytes(server.origin, bytes, 5000)
        assert.strictEqual(answer.status, 400, JSON.stringify(bytes))
        assert.match(answer.raw, /\r\nConnection: close\r\n/iu)
        assert.match(answer.raw, /\r\nContent-Type: application\/json\r\n/iu)
        const body = envelopeOf(answer.raw)
        assert.strictEqual(body.error.code, 400)
        assert.isString(body.error.message)
      }
    } finally {
      await server.close()
    }
  })

  it("headers over Node's limit get a 431 in the envelope", async () => {
    const server = await listen()
    try {
      const answer = await sendBytes(server.origin, `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 5000)
      assert.strictEqual(answer.status, 431)
      assert.deepStrictEqual(envelopeOf(answer.raw), { error: { code: 431, message: "Request header fields too large" } })
    } finally {
      await server.close()
    }
  })

  it("a well-formed request on the same server is answered as usual", async () => {
    const server = await listen()
    try {
      const answer = await sendBytes(server.origin, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 5000)
      assert.strictEqual(answer.status, 200)
    } finally {
      await server.close()
    }
  })

  it("the gateway answers them in the envelope", async () => {
    const gateway = await startServerProcess({ SWITCHYARD_DATA_DIR: Fs.mkdtempSync(NodePath.join(Os.tmpdir(), "switchyard-client-errors-")) })
    try {
      const origin = new URL(gateway.baseUrl).origin
      const garbage = await sendBytes(origin, "GARBAGE\r\n\r\n", 5000)
      assert.strictEqual(garbage.status, 400)
      assert.strictEqual(envelopeOf(garbage.raw).error.code, 400)
      const big = await sendBytes(origin, `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`, 5000)
      assert.strictEqual(big.status, 431)
      assert.strictEqual(envelopeOf(big.raw).error.code, 431)
    } finally {
      await gateway.stop()
    }
  }, 90_000)
})
