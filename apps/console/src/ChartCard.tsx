import { BarChart } from "@mantine/charts"
import { Paper, Text, Title, VisuallyHidden } from "@mantine/core"
import type { DailySeries } from "./ActivitySeries.ts"
import * as AxisTicks from "./AxisTicks.ts"

// Mantine palette entries at shades that keep 3:1 against white (WCAG non-text contrast).
const palette = ["indigo.7", "teal.8", "orange.8", "grape.7", "cyan.8", "red.8", "lime.9", "gray.7"]

/**
 * A stacked bar chart of one measure per day, with the same figures as a table for screen
 * readers.
 */
export const DailyChart = ({ id, title, series, format, tick, integers, empty }: {
  readonly id: string
  readonly title: string
  readonly series: DailySeries
  /** A value as the tooltip and the table write it. */
  readonly format: (value: number) => string
  /** The value axis's labels, given the decimals its step needs. */
  readonly tick: (decimals: number) => (value: number) => string
  /** Whether the measure counts whole things (requests): then the axis steps by whole numbers. */
  readonly integers?: boolean
  readonly empty: string
}) => {
  // The chart reads a series' values by key as a property path: an id with a dot
  // (`cohere/rerank-v3.5`) would read `row.cohere/rerank-v3` then `5`. Each series gets a plain key;
  // its name is the label the legend and the tooltip show.
  const keyOf = (i: number) => `series${i}`
  const data = series.data.map((row) => ({
    day: String(row.date).slice(5),
    ...Object.fromEntries(series.series.map((name, i) => [keyOf(i), row[name] ?? 0]))
  }))
  // The bars are stacked: the axis reaches the highest day's total.
  const highest = Math.max(0, ...series.data.map((row) => series.series.reduce((sum, name) => sum + Number(row[name] ?? 0), 0)))
  const axis = AxisTicks.nice(highest, { integers: integers ?? false })
  const tickLabel = tick(axis.decimals)
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby={id}>
      <Title order={2} size="h5" id={id} mb="sm">{title}</Title>
      {series.series.length === 0
        ? <Text c="dimmed" size="sm">{empty}</Text>
        : (
          <>
            <BarChart
              h={240}
              data={data}
              dataKey="day"
              type="stacked"
              withLegend
              legendProps={{ verticalAlign: "bottom" }}
              valueFormatter={format}
              yAxisProps={{
                ticks: [...axis.ticks],
                domain: [0, axis.ticks[axis.ticks.length - 1]!],
                interval: 0,
                tickFormatter: tickLabel,
                width: AxisTicks.width(axis.ticks.map(tickLabel))
              }}
              series={series.series.map((name, i) => ({ name: keyOf(i), label: name, color: palette[i % palette.length]! }))}
            />
            <VisuallyHidden>
              <table>
                <caption>{title}</caption>
                <thead>
                  <tr>
                    <th scope="col">Day</th>
                    {series.series.map((name) => <th scope="col" key={name}>{name}</th>)}
                  </tr>
                </thead>
                <tbody>
                  {series.data.filter((row) => series.series.some((name) => row[name] !== 0)).map((row) => (
                    <tr key={String(row.date)}>
                      <th scope="row">{String(row.date)}</th>
                      {series.series.map((name) => <td key={name}>{format(Number(row[name]))}</td>)}
                    </tr>
                  ))}
                </tbody>
              </table>
            </VisuallyHidden>
          </>
        )}
    </Paper>
  )
}
