import { Badge, Card, Code, Stack, Table, Text, Title } from "@mantine/core"
import { priceText } from "@switchyard/core/routing/CandidateReport"
import type { GenerationRecord } from "@switchyard/core/schema/Activity"
import type { EmbeddingResponse } from "@switchyard/core/schema/EmbeddingResponse"
import type { RerankResponse } from "@switchyard/core/schema/RerankResponse"
import type { RoutePlanReport } from "@switchyard/core/schema/RoutePlanReport"
import { DataTable } from "./DataTable.tsx"
import * as Format from "./Format.ts"
import { candidateReason, modeSentence, orderedCandidates } from "./RouteExplanation.ts"

/**
 * What the route playground shows of a request: the plan the gateway would follow, with every
 * candidate endpoint and why it is in or out; and, sent for real, who served it, in how long and
 * at what cost (vectors, or ranked documents).
 */

const candidateColumns = ["#", "Provider", "Variant", "Price", "Status", "Why"]
const rankedColumns = ["Rank", "#", "Score", "Document"]

export const PlanView = ({ plan }: { readonly plan: RoutePlanReport }) => (
  <Card withBorder component="section" aria-labelledby="plan-title">
    <Stack gap="xs">
      <Title order={2} size="h4" id="plan-title">Plan for {plan.model}</Title>
      <Text size="sm">{modeSentence(plan.explanation)}</Text>
      <Text size="sm">
        Order of attempts: {plan.attempts.length === 0 ? "none" : plan.attempts.join(" → ")}
      </Text>
      <Text size="sm" c="dimmed">
        Estimate: at most {Format.integer(plan.estimate.prompt_tokens)} prompt tokens, at most {Format.money(plan.estimate.cost)} on the
        first choice. Seed {plan.explanation.seed}.
      </Text>
      <DataTable label="Candidate endpoints" minWidth={640} columns={candidateColumns} aria-label="Candidate endpoints">
        {orderedCandidates(plan.explanation).map((candidate) => (
          <Table.Tr key={candidate.id} data-provider={candidate.provider} data-status={candidate.status}>
            <Table.Td>{candidate.rank ?? "-"}</Table.Td>
            <Table.Td ff="monospace">{candidate.provider}</Table.Td>
            <Table.Td>{candidate.variant}</Table.Td>
            <Table.Td>{priceText(candidate)}</Table.Td>
            <Table.Td>
              <Badge
                variant="light"
                color={candidate.status === "attempt" ? "teal" : candidate.status === "excluded" ? "red" : "gray"}
              >
                {candidate.status === "attempt" ? "in" : candidate.status === "excluded" ? "excluded" : "unused"}
              </Badge>
            </Table.Td>
            <Table.Td><Text size="sm">{candidateReason(candidate)}</Text></Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </Stack>
  </Card>
)

export interface Result {
  readonly body: EmbeddingResponse
  readonly ms: number
  readonly generation: GenerationRecord | undefined
}

export const RerankResultView = ({ body, ms }: { readonly body: RerankResponse; readonly ms: number }) => (
  <Card withBorder component="section" aria-labelledby="result-title">
    <Stack gap={4}>
      <Title order={2} size="h4" id="result-title">Sent for real</Title>
      <Text size="sm">
        Served by <Code>{body.provider}</Code> for <Code>{body.model}</Code> in {Format.millis(ms)}: {body.results.length}{" "}
        document{body.results.length === 1 ? "" : "s"} ranked. {Format.integer(body.usage.total_tokens)} tokens,{" "}
        {body.usage.search_units} search unit{body.usage.search_units === 1 ? "" : "s"}, cost {Format.money(body.usage.cost)}
        {body.usage.is_byok ? " (your own provider key)" : ""}. Generation {body.id}.
      </Text>
      <DataTable label="Ranked documents" minWidth={480} columns={rankedColumns} aria-label="Ranked documents">
        {body.results.map((r, rank) => (
          <Table.Tr key={r.index} data-index={r.index}>
            <Table.Td>{rank + 1}</Table.Td>
            <Table.Td>{r.index}</Table.Td>
            <Table.Td>{r.relevance_score.toFixed(4)}</Table.Td>
            <Table.Td><Text size="sm">{r.document?.text ?? ""}</Text></Table.Td>
          </Table.Tr>
        ))}
      </DataTable>
    </Stack>
  </Card>
)

export const ResultView = ({ result }: { readonly result: Result }) => {
  const first = result.body.data[0]
  const width = first === undefined ? 0 : typeof first.embedding === "string" ? "base64" : first.embedding.length
  const provider = result.generation === undefined ? "?" : `${result.generation.provider_name ?? result.generation.provider} (${result.generation.provider})`
  return (
    <Card withBorder component="section" aria-labelledby="result-title">
      <Stack gap={4}>
        <Title order={2} size="h4" id="result-title">Sent for real</Title>
        <Text size="sm">
          Served by <Code>{provider}</Code> for <Code>{result.body.model}</Code> in {Format.millis(result.ms)}:{" "}
          {result.body.data.length} vector{result.body.data.length === 1 ? "" : "s"} of {width} dimensions.
        </Text>
        <Text size="sm">
          {Format.integer(result.body.usage?.prompt_tokens)} prompt tokens, cost {Format.money(result.body.usage?.cost ?? 0)}
          {result.body.usage?.is_byok === true ? " (your own provider key)" : ""}. Generation {result.body.id ?? "-"}.
        </Text>
      </Stack>
    </Card>
  )
}
