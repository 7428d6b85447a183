import { Alert, Group, Stack, Text, Title } from "@mantine/core"
import { serverMessage } from "./ServerMessage.ts"

export const PageHeader = (
  { title, description, children }: { readonly title: string; readonly description?: string; readonly children?: React.ReactNode }
) => (
  <Group justify="space-between" align="flex-end" mb="md" wrap="wrap">
    <Stack gap={2}>
      <Title order={1} size="h2">{title}</Title>
      {description !== undefined && <Text c="dimmed" size="sm">{description}</Text>}
    </Stack>
    {children}
  </Group>
)

/**
 * A failed call, worded as the gateway worded it.
 */
export const ErrorNotice = ({ error, title }: { readonly error: unknown; readonly title?: string }) =>
  error === undefined || error === null ? null : (
    <Alert color="red" title={title ?? "The gateway refused"} role="alert" mb="md">
      {serverMessage(error)}
    </Alert>
  )
