import { assert, describe, it } from "vitest"
import * as ServerMessage from "../src/ServerMessage.ts"

describe("ServerMessage.failureTitle", () => {
  it("heads an upstream provider's failure as the provider's, a refusal as the gateway's", () => {
    const upstream = { _tag: "BadGateway", message: 'Provider "flaky" failed with status 502', metadata: { provider_name: "flaky", reason: "ServerError" } }
    assert.strictEqual(ServerMessage.failureTitle(upstream), "The upstream provider flaky failed (ServerError)")
    assert.strictEqual(ServerMessage.failureTitle({ _tag: "BadRequest", message: "input is empty" }), "The gateway refused")
    assert.strictEqual(ServerMessage.failureTitle(undefined), "The gateway refused")
  })
})
