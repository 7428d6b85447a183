import { Badge, Stack, Table, Text, Title } from "@mantine/core"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { ScrollTable } from "../ScrollTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

const Byok = () => {
  const { client } = useSession()
  const byok = useLoad(() => client.byok.list({ query: {} }), [client])
  return (
    <section aria-labelledby="byok-title">
      <Title order={2} size="h4" id="byok-title" mb="xs">Your own provider keys (BYOK)</Title>
      <ErrorNotice error={byok.error} />
      {(byok.data?.data.length ?? 0) === 0
        ? <Text c="dimmed" size="sm">This workspace has stored no provider credentials: requests use the gateway's own.</Text>
        : (
          <ScrollTable label="Provider keys" minWidth={520}>
            <Table verticalSpacing="xs">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Provider</Table.Th>
                  <Table.Th scope="col">Name</Table.Th>
                  <Table.Th scope="col">Key</Table.Th>
                  <Table.Th scope="col">State</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {byok.data?.data.map((key) => (
                  <Table.Tr key={key.id}>
                    <Table.Td ff="monospace">{key.provider}</Table.Td>
                    <Table.Td>{key.name ?? "-"}</Table.Td>
                    <Table.Td ff="monospace">{key.label}</Table.Td>
                    <Table.Td>
                      <Badge variant="light" color={key.disabled ? "gray" : "teal"}>{key.disabled ? "disabled" : "in use"}</Badge>
                    </Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        )}
    </section>
  )
}

export const ProvidersPage = () => {
  const session = useSession()
  const models = useLoad(() => session.client.embeddings.listModels({ query: {} }), [session.client])
  return (
    <>
      <PageHeader title="Providers" description="The models the gateway serves and their list prices." />
      <Stack>
        <ErrorNotice error={models.error} />
        <section aria-labelledby="models-title">
          <Title order={2} size="h4" id="models-title" mb="xs">Models</Title>
          <ScrollTable label="Models" minWidth={560}>
            <Table verticalSpacing="xs" striped>
              <Table.Thead>
                <Table.Tr>
                  <Table.Th scope="col">Model</Table.Th>
                  <Table.Th scope="col">Prompt $/M tokens</Table.Th>
                  <Table.Th scope="col">Context</Table.Th>
                  <Table.Th scope="col">Inputs</Table.Th>
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {models.data?.data.map((model) => (
                  <Table.Tr key={model.id}>
                    <Table.Td>
                      <Text size="sm" ff="monospace">{model.id}</Text>
                      <Text size="xs" c="dimmed">{model.name}</Text>
                    </Table.Td>
                    <Table.Td>${model.pricing.prompt}</Table.Td>
                    <Table.Td>{model.context_length ?? "-"}</Table.Td>
                    <Table.Td>{model.architecture.input_modalities.join(", ")}</Table.Td>
                  </Table.Tr>
                ))}
              </Table.Tbody>
            </Table>
          </ScrollTable>
        </section>
        {session.isManagement && <Byok />}
      </Stack>
    </>
  )
}
