import {
  Alert,
  Badge,
  Button,
  Card,
  Code,
  Group,
  PasswordInput,
  SegmentedControl,
  Select,
  SimpleGrid,
  Stack,
  Switch,
  Table,
  Text,
  Textarea,
  TextInput,
  Title
} from "@mantine/core"
import { priceText } from "@switchyard/core/routing/CandidateReport"
import type { GenerationRecord } from "@switchyard/core/schema/Activity"
import type { EmbeddingResponse } from "@switchyard/core/schema/EmbeddingResponse"
import type { RerankResponse } from "@switchyard/core/schema/RerankResponse"
import type { RoutePlanReport } from "@switchyard/core/schema/RoutePlanReport"
import { useEffect, useMemo, useState } from "react"
import * as Format from "../Format.ts"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { emptyForm, type PlaygroundForm, toRequest, toRerankRequest } from "../PlaygroundRequest.ts"
import { candidateReason, modeSentence, orderedCandidates } from "../RouteExplanation.ts"
import { clientFor, storedSecret } from "../Session.ts"
import { ScrollTable } from "../ScrollTable.tsx"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

const sorts = [
  { value: "none", label: "None (load balanced)" },
  { value: "price", label: "Price" },
  { value: "throughput", label: "Throughput" },
  { value: "latency", label: "Latency" },
  { value: "exacto", label: "Exacto (precision)" }
]

const runKeyStorage = "switchyard.console.playground-key"

const PlanView = ({ plan }: { readonly plan: RoutePlanReport }) => (
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
      <ScrollTable label="Candidate endpoints" minWidth={640}>
        <Table verticalSpacing="xs" aria-label="Candidate endpoints">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">#</Table.Th>
              <Table.Th scope="col">Provider</Table.Th>
              <Table.Th scope="col">Variant</Table.Th>
              <Table.Th scope="col">Price</Table.Th>
              <Table.Th scope="col">Status</Table.Th>
              <Table.Th scope="col">Why</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
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
          </Table.Tbody>
        </Table>
      </ScrollTable>
    </Stack>
  </Card>
)

interface Result {
  readonly body: EmbeddingResponse
  readonly ms: number
  readonly generation: GenerationRecord | undefined
}

const RerankResultView = ({ body, ms }: { readonly body: RerankResponse; readonly ms: number }) => (
  <Card withBorder component="section" aria-labelledby="result-title">
    <Stack gap={4}>
      <Title order={2} size="h4" id="result-title">Sent for real</Title>
      <Text size="sm">
        Served by <Code>{body.provider}</Code> for <Code>{body.model}</Code> in {Format.millis(ms)}: {body.results.length}{" "}
        document{body.results.length === 1 ? "" : "s"} ranked. {Format.integer(body.usage.total_tokens)} tokens,{" "}
        {body.usage.search_units} search unit{body.usage.search_units === 1 ? "" : "s"}, cost {Format.money(body.usage.cost)}
        {body.usage.is_byok ? " (your own provider key)" : ""}. Generation {body.id}.
      </Text>
      <ScrollTable label="Ranked documents" minWidth={480}>
        <Table verticalSpacing="xs" aria-label="Ranked documents">
          <Table.Thead>
            <Table.Tr>
              <Table.Th scope="col">Rank</Table.Th>
              <Table.Th scope="col">#</Table.Th>
              <Table.Th scope="col">Score</Table.Th>
              <Table.Th scope="col">Document</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {body.results.map((r, rank) => (
              <Table.Tr key={r.index} data-index={r.index}>
                <Table.Td>{rank + 1}</Table.Td>
                <Table.Td>{r.index}</Table.Td>
                <Table.Td>{r.relevance_score.toFixed(4)}</Table.Td>
                <Table.Td><Text size="sm">{r.document?.text ?? ""}</Text></Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollTable>
    </Stack>
  </Card>
)

const tasks = [
  { value: "embeddings", label: "Embeddings" },
  { value: "rerank", label: "Rerank" }
]

const ResultView = ({ result }: { readonly result: Result }) => {
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

export const PlaygroundPage = () => {
  const session = useSession()
  const [form, setForm] = useState<PlaygroundForm>(emptyForm)
  const [runKey, setRunKey] = useState(() => sessionStorage.getItem(runKeyStorage) ?? "")
  const rerank = form.task === "rerank"
  const models = useLoad(
    ["models", session.client, form.task],
    (signal) =>
      rerank
        ? session.client.rerank.listModels({ query: {} }, { signal })
        : session.client.embeddings.listModels({ query: {} }, { signal })
  )
  const [plan, setPlan] = useState<RoutePlanReport | null>(null)
  const [result, setResult] = useState<Result | null>(null)
  const [reranked, setReranked] = useState<{ readonly body: RerankResponse; readonly ms: number } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState<"plan" | "send" | null>(null)

  // Model calls take a standard key; signed in with a management key, the person gives one here.
  // They are sent once, without retries: one click is one request (and at most one charge).
  const runner = useMemo(() => {
    const secret = session.isManagement ? runKey.trim() : (storedSecret() ?? "")
    return secret === "" ? null : clientFor(secret, 0)
  }, [session, runKey])
  useEffect(() => () => void runner?.close(), [runner])
  useEffect(() => {
    if (runKey.trim() === "") sessionStorage.removeItem(runKeyStorage)
    else sessionStorage.setItem(runKeyStorage, runKey.trim())
  }, [runKey])

  useEffect(() => {
    const first = models.data?.data[0]
    if (form.model === "" && first !== undefined) setForm((f) => ({ ...f, model: first.id }))
  }, [models.data, form.model])

  const request = toRequest(form)
  const rerankRequest = toRerankRequest(form)
  const set = <K extends keyof PlaygroundForm>(key: K) => (value: PlaygroundForm[K]) => setForm((f) => ({ ...f, [key]: value }))
  // Another task lists other models: the first of the new list is picked.
  const switchTask = (task: PlaygroundForm["task"]) => {
    setForm((f) => ({ ...f, task, model: "" }))
    setPlan(null)
    setResult(null)
    setReranked(null)
  }

  const explain = (event: React.FormEvent) => {
    event.preventDefault()
    if (runner === null) return
    setBusy("plan")
    setError(null)
    setResult(null)
    setReranked(null)
    const planned = rerank ? runner.rerank.plan({ payload: rerankRequest }) : runner.embeddings.plan({ payload: request })
    planned.then(setPlan, (cause: unknown) => {
      setPlan(null)
      setError(cause)
    }).finally(() => setBusy(null))
  }

  // A failed send leaves only its error: no earlier answer or plan under it reads as this one's.
  const failed = (cause: unknown) => {
    setPlan(null)
    setError(cause)
  }

  const send = () => {
    if (runner === null) return
    setBusy("send")
    setError(null)
    setResult(null)
    setReranked(null)
    const started = performance.now()
    if (rerank) {
      runner.rerank.create({ payload: rerankRequest }).then(
        (body) => setReranked({ body, ms: performance.now() - started }),
        failed
      ).finally(() => setBusy(null))
      return
    }
    // Which provider served comes from the generation's record, as GET /generation reports it.
    runner.embeddings.create({ payload: request }).then(async (body) => {
      const ms = performance.now() - started
      const generation = body.id === undefined
        ? undefined
        : await runner.activity.generation({ query: { id: body.id } }).then((g) => g.data, () => undefined)
      setResult({ body, ms, generation })
    }, failed).finally(() => setBusy(null))
  }

  return (
    <>
      <PageHeader
        title="Route playground"
        description="Write an embeddings or rerank request and see the route the gateway would take, without calling any provider; then send it for real if you want."
      />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="lg">
        <form onSubmit={explain} aria-label={rerank ? "Rerank request" : "Embeddings request"}>
          <Stack>
            <SegmentedControl
              aria-label="Task"
              data={tasks}
              value={form.task}
              onChange={(value) => switchTask(value as PlaygroundForm["task"])}
            />
            {session.isManagement && (
              <PasswordInput
                label="Standard key to run with"
                description="Model calls take a standard key; a management key only manages. Kept in this tab only."
                value={runKey}
                autoComplete="off"
                onChange={(event) => setRunKey(event.currentTarget.value)}
              />
            )}
            <Select
              label="Model"
              searchable
              required
              data={(models.data?.data ?? []).map((model) => ({ value: model.id, label: `${model.id} (${model.name})` }))}
              value={form.model === "" ? null : form.model}
              onChange={(value) => set("model")(value ?? "")}
              error={models.error === undefined ? undefined : "The model list could not be loaded"}
            />
            {rerank && (
              <TextInput label="Query" required value={form.query} onChange={(e) => set("query")(e.currentTarget.value)} />
            )}
            <Textarea
              label={rerank ? "Documents" : "Input"}
              description={rerank ? "One document per line" : "One input per line"}
              autosize
              minRows={2}
              maxRows={8}
              required
              value={form.inputs}
              onChange={(event) => set("inputs")(event.currentTarget.value)}
            />
            <SimpleGrid cols={{ base: 1, sm: 2 }}>
              <TextInput label="Order" description="Provider slugs, comma-separated" value={form.order} onChange={(e) => set("order")(e.currentTarget.value)} />
              <TextInput label="Only" description="Allow only these providers" value={form.only} onChange={(e) => set("only")(e.currentTarget.value)} />
              <TextInput label="Ignore" description="Never use these providers" value={form.ignore} onChange={(e) => set("ignore")(e.currentTarget.value)} />
              <TextInput label="Quantizations" description="For example fp16, bf16" value={form.quantizations} onChange={(e) => set("quantizations")(e.currentTarget.value)} />
              <Select label="Sort" data={sorts} allowDeselect={false} value={form.sort} onChange={(value) => set("sort")((value ?? "none") as PlaygroundForm["sort"])} />
              <TextInput label="Max prompt price" description="USD per million tokens" inputMode="decimal" value={form.maxPromptPrice} onChange={(e) => set("maxPromptPrice")(e.currentTarget.value)} />
              {!rerank && (
                <TextInput label="Dimensions" inputMode="numeric" value={form.dimensions} onChange={(e) => set("dimensions")(e.currentTarget.value)} />
              )}
            </SimpleGrid>
            <Group>
              <Switch label="Allow fallbacks" checked={form.allowFallbacks} onChange={(e) => set("allowFallbacks")(e.currentTarget.checked)} />
              <Switch label="Zero data retention only" checked={form.zdr} onChange={(e) => set("zdr")(e.currentTarget.checked)} />
              <Switch label="Deny data collection" checked={form.denyDataCollection} onChange={(e) => set("denyDataCollection")(e.currentTarget.checked)} />
            </Group>
            <Text size="sm" fw={500} id="request-body-label">Request body</Text>
            <Code block tabIndex={0} aria-labelledby="request-body-label">{JSON.stringify(rerank ? rerankRequest : request, null, 2)}</Code>
            <Group>
              <Button type="submit" loading={busy === "plan"} disabled={runner === null}>Explain route</Button>
              <Button variant="light" onClick={send} loading={busy === "send"} disabled={runner === null || plan === null}>
                Send for real
              </Button>
            </Group>
            {runner === null && <Text size="sm" c="dimmed">Give a standard key above to explain or send requests.</Text>}
          </Stack>
        </form>
        <Stack>
          <ErrorNotice error={error} />
          {result !== null && <ResultView result={result} />}
          {reranked !== null && <RerankResultView body={reranked.body} ms={reranked.ms} />}
          {plan !== null ? <PlanView plan={plan} /> : error === null && (
            <Alert color="gray" title="No plan yet">
              Explain the route to see every provider endpoint of the model: the order in which they would be tried,
              and each excluded one with the filter that removed it.
            </Alert>
          )}
        </Stack>
      </SimpleGrid>
    </>
  )
}
