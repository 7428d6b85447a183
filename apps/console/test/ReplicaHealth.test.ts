import { assert, describe, it } from "vitest"
import * as ReplicaHealth from "../src/ReplicaHealth.ts"

describe("ReplicaHealth", () => {
  it("words each replica's health, load and latency in the configured order", () => {
    assert.deepStrictEqual(ReplicaHealth.rows([
      { base_url: "http://tei-0:80", healthy: true, in_flight: 3, p50_ms: 12.4 },
      { base_url: "http://tei-1:80", healthy: false, in_flight: 0, p50_ms: null }
    ]), [
      { baseUrl: "http://tei-0:80", state: "healthy", inFlight: "3", p50: "12 ms" },
      { baseUrl: "http://tei-1:80", state: "held out", inFlight: "0", p50: "-" }
    ])
  })

  it("shows nothing for a provider that is no self-hosted server", () => {
    assert.deepStrictEqual(ReplicaHealth.rows(undefined), [])
  })
})
