import { Paper, Text } from "@mantine/core"

export const StatCard = ({ label, value, hint }: { readonly label: string; readonly value: string; readonly hint?: string | undefined }) => (
  <Paper withBorder p="md" radius="md" component="section" aria-label={label}>
    <Text size="xs" tt="uppercase" fw={700} c="dimmed">{label}</Text>
    <Text size="xl" fw={700} mt={4}>{value}</Text>
    {hint !== undefined && <Text size="xs" c="dimmed" mt={2}>{hint}</Text>}
  </Paper>
)
