import type { ManagedProvider } from "@switchyard/core/catalog/ManagedProvider"

export type Replica = NonNullable<ManagedProvider["replicas"]>[number]

/** One replica of a self-hosted server as the Providers page shows it. */
export interface ReplicaRow {
  readonly baseUrl: string
  readonly state: "healthy" | "held out"
  readonly inFlight: string
  readonly p50: string
}

/**
 * The replicas of a provider as the gateway reported them (`GET /providers/{slug}`), in their
 * configured order: health, requests in flight and p50 latency ("-" before the first answer).
 */
export const rows = (replicas: ReadonlyArray<Replica> | undefined): ReadonlyArray<ReplicaRow> =>
  (replicas ?? []).map((r) => ({
    baseUrl: r.base_url,
    state: r.healthy ? "healthy" : "held out",
    inFlight: String(r.in_flight),
    p50: r.p50_ms === null ? "-" : `${Math.round(r.p50_ms)} ms`
  }))
