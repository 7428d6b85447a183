import { assert, describe, it } from "vitest"
import * as EndpointStatus from "../src/EndpointStatus.ts"

describe("EndpointStatus", () => {
  it("words the endpoint's status", () => {
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: true, uptime_last_30m: null }), "healthy")
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: true, uptime_last_30m: 99 }), "healthy")
    assert.strictEqual(EndpointStatus.statusLabel({ status: -1, active: true, uptime_last_30m: 100 }), "failed recently")
    assert.strictEqual(EndpointStatus.statusLabel({ status: -10, active: false, uptime_last_30m: null }), "inactive")
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: false, uptime_last_30m: 0 }), "inactive")
  })

  it("never calls an endpoint healthy whose calls of the last 30 minutes failed", () => {
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: true, uptime_last_30m: 0 }), "failing")
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: true, uptime_last_30m: 60 }), "degraded")
    assert.strictEqual(EndpointStatus.statusLabel({ status: 0, active: true, uptime_last_30m: 95 }), "degraded")
  })

  it("turns an uptime percentage into an error rate", () => {
    assert.strictEqual(EndpointStatus.errorRate(100), 0)
    assert.strictEqual(EndpointStatus.errorRate(75), 0.25)
    assert.strictEqual(EndpointStatus.errorRate(null), undefined)
  })

  it("reads a provider's health as its worst endpoint that can serve", () => {
    const at = (provider: string, status: number, active: boolean, uptime: number | null) => ({ provider, status, active, uptime_last_30m: uptime })
    const endpoints = [at("a", 0, true, 100), at("a", 0, true, 0), at("b", 0, true, null), at("c", -10, false, null), at("d", 0, true, 100), at("d", 0, false, null)]
    assert.deepStrictEqual(EndpointStatus.providerHealth(endpoints, "a"), { label: "failing", count: 1, of: 2 })
    assert.deepStrictEqual(EndpointStatus.providerHealth(endpoints, "b"), { label: "healthy", count: 1, of: 1 })
    assert.deepStrictEqual(EndpointStatus.providerHealth(endpoints, "c"), { label: "inactive", count: 1, of: 1 })
    assert.deepStrictEqual(EndpointStatus.providerHealth(endpoints, "d"), { label: "healthy", count: 1, of: 2 })
    assert.isUndefined(EndpointStatus.providerHealth(endpoints, "gone"))
  })
})
