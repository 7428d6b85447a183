import { afterAll, assert, beforeAll, describe, it } from "@effect/vitest"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { endpoint, type Gateway, startGateway } from "../embeddings/Gateway.ts"
import * as FakeTei from "../fakes/FakeTei.ts"
import type * as FakeUpstream from "../fakes/FakeUpstream.ts"
import { level, record } from "./Reliability.ts"

/**
 * One provider of three TEI replicas under 16 concurrent clients: how evenly the requests spread
 * while all are up, then one replica killed (its port closed) and restarted on the same port:
 * requests failed after its first failure, whether it was held out, and how long after it
 * returned the gateway showed it healthy again (one probe interval is 5 s). `pnpm
 * test:reliability` runs each phase for 20 s and writes the figures to
 * `<tmp>/switchyard-self-hosted-replicas.json`; the quick run (`pnpm test`) for 3 s.
 */
const model = "sh/bge-small"
const clients = 16
const phaseMs = level === "full" ? 20_000 : 3_000
const probeIntervalS = 5
const figuresFile = NodePath.join(Os.tmpdir(), "switchyard-self-hosted-replicas.json")

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms))

interface Outcome {
  readonly at: number
  readonly status: number
}

describe("reliability: three TEI replicas as one provider under load", () => {
  let gateway: Gateway
  let replicas: Array<FakeUpstream.FakeServer>
  const ports: Array<number> = []

  const embedsAt = (server: FakeUpstream.FakeServer) => server.requests.filter((r) => r.path === "/embed").length
  const shown = async () => {
    const reply = await gateway.call("/providers/gpu-tei", undefined, { key: gateway.server.managementKey, method: "GET" })
    return reply.json.data.replicas as Array<{ base_url: string; healthy: boolean; in_flight: number; p50_ms: number | null }>
  }
  // 16 clients in a closed loop until `until()` says stop; every answer's time and status kept.
  const load = async (until: () => boolean): Promise<Array<Outcome>> => {
    const outcomes: Array<Outcome> = []
    let n = 0
    await Promise.all(Array.from({ length: clients }, async () => {
      while (!until()) {
        const reply = await gateway.embed({ model, input: [`text ${n++}`, "the same text"] })
        outcomes.push({ at: Date.now(), status: reply.status })
      }
    }))
    return outcomes
  }

  beforeAll(async () => {
    replicas = await Promise.all([FakeTei.start(), FakeTei.start(), FakeTei.start()])
    for (const r of replicas) ports.push(Number(new URL(r.url).port))
    gateway = await startGateway({
      config: {
        providers: [{
          slug: "gpu-tei",
          name: "GPU TEI",
          adapter: "tei",
          base_urls: replicas.map((r) => r.url),
          health_interval_s: probeIntervalS,
          api_key_env: null,
          data_collection: "deny",
          timeout_ms: 5_000,
          endpoints: [endpoint(model, { upstream_model: "bge-small", dimensions: 384 })]
        }],
        workspaces: { default: { cache: false } }
      },
      credits: 1000
    })
  })
  afterAll(async () => {
    await gateway.close()
    await Promise.all(replicas.map((r) => r.close()))
  })

  it("spreads evenly, loses no request when a replica dies, holds it out and takes it back within one probe", async () => {
    // Phase 1: all healthy.
    const before = replicas.map(embedsAt)
    const endA = Date.now() + phaseMs
    const healthy = await load(() => Date.now() >= endA)
    const spread = replicas.map((r, i) => embedsAt(r) - before[i]!)
    const mean = spread.reduce((a, b) => a + b, 0) / spread.length
    const worstPct = Math.max(...spread.map((n) => Math.abs(n - mean) / mean)) * 100
    assert.isTrue(healthy.every((o) => o.status === 200), "every request served while all are up")
    for (const n of spread) assert.isAbove(n, 0)

    // Phase 2: replica 0 killed mid-load, restarted on its port half-way through.
    const killedAt = Date.now() + 500
    const restartAt = killedAt + phaseMs / 2
    // After the restart, long enough for a probe to find it and requests to reach it again.
    const endB = restartAt + Math.max(phaseMs / 2, probeIntervalS * 1000 + 2_000)
    let restartedAt = 0
    let backAt = 0
    let heldOutSeen = false
    const control = (async () => {
      await sleep(killedAt - Date.now())
      await replicas[0]!.close()
      while (Date.now() < restartAt) {
        if ((await shown())[0]?.healthy === false) heldOutSeen = true
        await sleep(100)
      }
      replicas[0] = await FakeTei.start({ port: ports[0]! })
      restartedAt = Date.now()
      while (Date.now() < endB) {
        if (backAt === 0 && (await shown())[0]?.healthy === true) backAt = Date.now()
        await sleep(50)
      }
    })()
    const faulted = await load(() => Date.now() >= endB)
    await control
    const failedAfterKill = faulted.filter((o) => o.at >= killedAt && o.status !== 200).length
    const servedByReturned = embedsAt(replicas[0]!)

    const figures = {
      level,
      clients,
      phase_s: phaseMs / 1000,
      healthy: { requests: healthy.length, per_replica: spread, worst_deviation_from_even_pct: Math.round(worstPct * 10) / 10 },
      killed: {
        requests: faulted.length,
        failed_after_first_failure: failedAfterKill,
        held_out_seen: heldOutSeen,
        back_healthy_after_restart_ms: backAt === 0 ? null : backAt - restartedAt,
        probe_interval_ms: probeIntervalS * 1000,
        requests_to_returned_replica: servedByReturned
      }
    }
    Fs.writeFileSync(figuresFile, `${JSON.stringify(figures, null, 2)}\n`)
    process.stdout.write(`\nSelf-hosted replicas: ${JSON.stringify(figures)}\n`)
    record("self-hosted-replicas", { requests: healthy.length + faulted.length, faultsInjected: 1 })

    assert.strictEqual(failedAfterKill, 0, "no request fails once the replica is gone: the next replica answers")
    assert.isTrue(heldOutSeen, "the dead replica is shown held out")
    assert.isAbove(backAt, 0, "the returned replica is healthy again")
    // One probe interval, plus the probe loop's one-second tick and the 50 ms poll here.
    // Timing is held to one probe interval in the full run; the quick run shares the machine with
    // the whole suite, so it allows a second probe.
    assert.isAtMost(backAt - restartedAt, (level === "full" ? 1 : 2) * probeIntervalS * 1000 + 1_500)
    assert.isAbove(servedByReturned, 0, "the returned replica serves again")
  }, 3 * phaseMs + 60_000)
})
