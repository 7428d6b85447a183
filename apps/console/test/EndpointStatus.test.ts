import { assert, describe, it } from "vitest"
import * as EndpointStatus from "../src/EndpointStatus.ts"

describe("EndpointStatus", () => {
  it("words the endpoint's status", () => {
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: true }), "healthy")
    assert.strictEqual(EndpointStatus.statusLabel({ status: -1, active: true }), "failed recently")
    assert.strictEqual(EndpointStatus.statusLabel({ status: -10, active: false }), "inactive")
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: false }), "inactive")
  })

  it("turns an uptime percentage into an error rate", () => {
    assert.strictEqual(EndpointStatus.errorRate(100), 0)
    assert.strictEqual(EndpointStatus.errorRate(75), 0.25)
    assert.strictEqual(EndpointStatus.errorRate(null), undefined)
  })
})
