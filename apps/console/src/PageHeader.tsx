import { Alert, Group, Stack, Text, Title } from "@mantine/core"
import { failureTitle, serverMessage } from "./ServerMessage.ts"

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
 * A failed call, worded as the gateway worded it, headed by who failed: an upstream provider, or
 * the gateway refusing the request.
 */
export const ErrorNotice = ({ error, title }: { readonly error: unknown; readonly title?: string }) =>
  error === undefined || error === null ? null : (
    <Alert color="red" title={title ?? failureTitle(error)} role="alert" mb="md">
      {serverMessage(error)}
    </Alert>
  )
