/**
 * The ticks of a chart's value axis: from 0 to at least the highest value in at most
 * `intervals` equal steps of 1, 2 or 5 times a power of ten, so every label is rounded alike.
 */
export interface Axis {
  readonly ticks: ReadonlyArray<number>
  /** Decimals every label shows: as many as the step needs, the same for all. */
  readonly decimals: number
}

const mantissas = [1, 2, 5, 10]

export const nice = (max: number, options: { readonly intervals?: number; readonly integers?: boolean } = {}): Axis => {
  const intervals = options.intervals ?? 4
  if (!Number.isFinite(max) || max <= 0) return { ticks: [0, 1], decimals: 0 }
  const raw = max / intervals
  const exponent = Math.max(options.integers === true ? 0 : -Infinity, Math.floor(Math.log10(raw)))
  const magnitude = 10 ** exponent
  // The tolerance keeps a step that floating point makes a hair too small (0.3 / 3).
  const step = mantissas.map((m) => m * magnitude).find((s) => s >= raw * (1 - 1e-9)) ?? 10 * magnitude
  const decimals = Math.max(0, -exponent)
  const steps = Math.ceil(max / step - 1e-9)
  return { ticks: Array.from({ length: steps + 1 }, (_, i) => Number((i * step).toFixed(decimals))), decimals }
}

/**
 * The width in pixels the axis needs for its longest label at the charts' 12 px font.
 */
export const width = (labels: ReadonlyArray<string>): number =>
  Math.ceil(Math.max(1, ...labels.map((label) => label.length)) * 7.5) + 12
