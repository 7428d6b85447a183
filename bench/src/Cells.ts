import { benchModels, effectFloorApiKey, upstreamModels } from "./Processes.ts"

/**
 * What is measured: the cells (request shape × concurrency) and the targets each cell loads.
 */
export type TargetId =
  | "direct"
  | "floor"
  | "effect-floor"
  | "switchyard"
  | "switchyard-free"
  | "switchyard-cached"
  | "switchyard-quiet"
  | "switchyard-old"
  | "switchyard-workers"
  | "switchyard-normal"
  | "peer"
  | "switchyard-pg"
  | "switchyard-pg-free"

export const targetLabels: Record<TargetId, string> = {
  direct: "upstream, direct",
  floor: "node:http pass-through (floor)",
  "effect-floor": "minimal Effect 4 gateway (the stack's floor)",
  switchyard: "Switchyard (SQLite, accounting on)",
  "switchyard-free": "Switchyard (SQLite, zero-priced model)",
  "switchyard-cached": "Switchyard (SQLite, every item cached)",
  "switchyard-quiet": "Switchyard (SQLite, accounting on, access log off)",
  "switchyard-old": "Switchyard, old build",
  "switchyard-workers": "Switchyard (SQLite, accounting on, SWITCHYARD_WORKERS=2)",
  "switchyard-normal": "Switchyard (SQLite, accounting on, SWITCHYARD_SQLITE_SYNCHRONOUS=normal)",
  peer: "Portkey gateway 1.15.2 (peer)",
  "switchyard-pg": "Switchyard (PostgreSQL, accounting on)",
  "switchyard-pg-free": "Switchyard (PostgreSQL, zero-priced model)"
}

export type CellId = "small-c1" | "small-c16" | "small-c64" | "large-c16" | "bulk2000-c4" | "base64-c16" | "delay20-c64" | "vector-c16"

export interface Cell {
  readonly id: CellId
  readonly label: string
  readonly inputs: number
  readonly encoding: "float" | "base64"
  readonly delayed: boolean
  readonly connections: number
  readonly targets: ReadonlyArray<TargetId>
  /** Issue 60: a width and a type the gateway makes (a Matryoshka model at an endpoint without native dimensions). */
  readonly vector?: { readonly dimensions: number; readonly dtype: "int8" | "uint8" | "binary" | "ubinary" }
}

/** `switchyard-old` runs only with `--old-server REF` (an earlier commit's build, for the before/after). */
const core: ReadonlyArray<TargetId> = ["direct", "floor", "effect-floor", "switchyard", "switchyard-old", "peer"]
/** The cells of the bar also measure Switchyard on PostgreSQL (when `DATABASE_URL` is set). */
const withPg: ReadonlyArray<TargetId> = [...core, "switchyard-pg"]
const withAccounting: ReadonlyArray<TargetId> = [...core, "switchyard-free", "switchyard-pg", "switchyard-pg-free"]
/**
 * The cells where Switchyard also serves the same requests with every item in its embeddings
 * cache (written by the validation request and the warm-up), against the same process going
 * upstream: its other targets send `x-switchyard-cache: bypass`.
 */
export const cachedCells: ReadonlyArray<CellId> = ["small-c16", "large-c16"]
/**
 * The cell where a second Switchyard process, the same but started with
 * `SWITCHYARD_LOG_LEVEL=warn` (its access lines are `info`), serves the same requests: the
 * access log's cost is the difference.
 */
export const accessLogCell: CellId = "small-c16"

/**
 * The cell where a second Switchyard process, the same but started with `SWITCHYARD_WORKERS=2`
 * (a primary and two workers on one port and one SQLite file), serves the same requests as the
 * one-worker process, interleaved with it: issue 36's "all cores of one machine" bar.
 */
export const workersCell: CellId = "small-c16"

export const cells: ReadonlyArray<Cell> = [
  // `switchyard-normal`: a fourth Switchyard process, the same but started with
  // `SWITCHYARD_SQLITE_SYNCHRONOUS=normal` (commits synced at checkpoints, not each one), serves the
  // same requests: what the fsync of a lone request's flush costs its latency (issue 47).
  { id: "small-c1", label: "small (1 input, 1536 floats), c=1", inputs: 1, encoding: "float", delayed: false, connections: 1, targets: [...withPg, "switchyard-normal"] },
  { id: "small-c16", label: "small, c=16", inputs: 1, encoding: "float", delayed: false, connections: 16, targets: [...withAccounting, "switchyard-cached", "switchyard-quiet", "switchyard-workers"] },
  { id: "small-c64", label: "small, c=64", inputs: 1, encoding: "float", delayed: false, connections: 64, targets: withAccounting },
  { id: "large-c16", label: "large (64 inputs × 1536 floats), c=16", inputs: 64, encoding: "float", delayed: false, connections: 16, targets: [...withPg, "switchyard-cached"] },
  // As many inputs as OpenAI's SDK sends in one request: what a request holds is its answer (issue #50).
  { id: "bulk2000-c4", label: "bulk (2,000 inputs × 1536 floats), c=4", inputs: 2000, encoding: "float", delayed: false, connections: 4, targets: ["switchyard"] },
  { id: "base64-c16", label: "base64 (1 input), c=16", inputs: 1, encoding: "base64", delayed: false, connections: 16, targets: core },
  { id: "delay20-c64", label: "20 ms upstream delay (1 input), c=64", inputs: 1, encoding: "float", delayed: true, connections: 64, targets: core },
  // Issue 60's cost bar: the small request asking 256 dimensions as int8 of a Matryoshka model whose
  // endpoint takes no dimensions, so the gateway cuts the upstream's 1,536 floats and quantizes them.
  {
    id: "vector-c16",
    label: "small, 256 dimensions as int8 made by the gateway, c=16",
    inputs: 1,
    encoding: "float",
    delayed: false,
    connections: 16,
    targets: ["direct", "floor", "switchyard"],
    vector: { dimensions: 256, dtype: "int8" }
  }
]

/** A target's label; the old build's names its ref. */
export const targetLabel = (target: TargetId, oldRef?: string): string =>
  target === "switchyard-old" && oldRef !== undefined ? `${targetLabels[target]} (${oldRef})` : targetLabels[target]

export const width = 1536

// Each cell has texts of its own: the fake upstream's vectors depend on an item's position, not
// its text, so a text cached in one cell must not be a partial hit in another.
const sentence = (cell: Cell, i: number) =>
  `Document ${i} of ${cell.id}: the quick brown fox jumps over the lazy dog while the gateway routes embeddings to its upstream.`

const inputsOf = (cell: Cell): string | ReadonlyArray<string> =>
  cell.inputs === 1 ? sentence(cell, 0) : Array.from({ length: cell.inputs }, (_, i) => sentence(cell, i))

export interface Endpoints {
  readonly upstreamPort: number
  readonly ports: Partial<Record<TargetId, number>>
  readonly apiKeys: Partial<Record<TargetId, string>>
  readonly upstreamApiKey: string
}

export interface TargetRequest {
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/**
 * The request a target gets in a cell: the same OpenAI-shaped body everywhere; the model is the
 * upstream's for the upstream, the floor and the peer, and Switchyard's catalog slug for Switchyard.
 * Switchyard's workspace has the embeddings cache on: every Switchyard target but
 * `switchyard-cached` bypasses it, so that it goes upstream every time.
 */
export const requestFor = (cell: Cell, target: TargetId, endpoints: Endpoints): TargetRequest => {
  const input = inputsOf(cell)
  const encoding = cell.encoding === "base64" ? { encoding_format: "base64" } : {}
  const upstreamModel = cell.delayed ? upstreamModels.slow : upstreamModels.fast
  const port = target === "direct" ? endpoints.upstreamPort : endpoints.ports[target]
  if (port === undefined) throw new Error(`no port for ${target}`)
  const upstreamAuth = { authorization: `Bearer ${endpoints.upstreamApiKey}` }
  switch (target) {
    case "direct":
    case "floor":
      return {
        url: `http://127.0.0.1:${port}/v1/embeddings`,
        headers: upstreamAuth,
        body: JSON.stringify({ model: upstreamModel, input, ...encoding })
      }
    case "effect-floor":
      return {
        url: `http://127.0.0.1:${port}/api/v1/embeddings`,
        headers: { authorization: `Bearer ${effectFloorApiKey}` },
        body: JSON.stringify({ model: cell.delayed ? benchModels.slow : benchModels.priced, input, ...encoding })
      }
    case "peer":
      return {
        url: `http://127.0.0.1:${port}/v1/embeddings`,
        headers: {
          ...upstreamAuth,
          "x-portkey-provider": "openai",
          "x-portkey-custom-host": `http://127.0.0.1:${endpoints.upstreamPort}/v1`
        },
        body: JSON.stringify({ model: upstreamModel, input, ...encoding })
      }
    default: {
      const free = target === "switchyard-free" || target === "switchyard-pg-free"
      const model = cell.delayed ? benchModels.slow : cell.vector !== undefined ? benchModels.nested : free ? benchModels.free : benchModels.priced
      const cache = target === "switchyard-cached" ? {} : { "x-switchyard-cache": "bypass" }
      const vector = cell.vector === undefined ? {} : { dimensions: cell.vector.dimensions, output_dtype: cell.vector.dtype }
      return {
        url: `http://127.0.0.1:${port}/api/v1/embeddings`,
        headers: { authorization: `Bearer ${endpoints.apiKeys[target]}`, ...cache },
        body: JSON.stringify({ model, input, ...encoding, ...vector })
      }
    }
  }
}
