import { Paper, Table, Text, Title } from "@mantine/core"
import type { ActivityItem } from "@switchyard/core/schema/Activity"
import * as CacheSummary from "./CacheSummary.ts"
import * as Format from "./Format.ts"
import { DataTable } from "./DataTable.tsx"

/**
 * The embeddings cache per model over the activity's 30 days: the share of prompt tokens it
 * answered and what those tokens would have cost.
 */
export const CacheTable = ({ rows }: { readonly rows: ReadonlyArray<ActivityItem> }) => {
  const models = CacheSummary.byModel(rows)
  return (
    <Paper withBorder p="md" radius="md" component="section" aria-labelledby="cache-title">
      <Title order={2} size="h5" id="cache-title" mb="sm">Embeddings cache by model, last 30 days</Title>
      {models.length === 0
        ? <Text c="dimmed" size="sm">No requests in the last 30 days.</Text>
        : (
          <DataTable label="Embeddings cache by model" minWidth={480} columns={["Model", "Prompt tokens", "From the cache", "Hit rate", "Saved"]} verticalSpacing={4}>
            {models.map((m) => (
              <Table.Tr key={m.model} data-model={m.model}>
                <Table.Td><Text size="sm" ff="monospace">{m.model}</Text></Table.Td>
                <Table.Td>{Format.integer(m.promptTokens)}</Table.Td>
                <Table.Td>{Format.integer(m.cachedTokens)}</Table.Td>
                <Table.Td>{Format.percent(m.hitRate)}</Table.Td>
                <Table.Td>{Format.money(m.saved)}</Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      <Text size="xs" c="dimmed" mt="xs">Hit rate: the share of prompt tokens the cache answered. Saved: those tokens at today's prompt prices.</Text>
    </Paper>
  )
}
