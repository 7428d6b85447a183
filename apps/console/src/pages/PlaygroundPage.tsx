import { Alert, Button, Code, Group, PasswordInput, SegmentedControl, SimpleGrid, Stack, Text } from "@mantine/core"
import type { RerankResponse } from "@switchyard/core/schema/RerankResponse"
import type { RoutePlanReport } from "@switchyard/core/schema/RoutePlanReport"
import { useEffect, useMemo, useState } from "react"
import { ErrorNotice, PageHeader } from "../PageHeader.tsx"
import { PreferenceFields, RequestFields, type SetField } from "../PlaygroundFields.tsx"
import { emptyForm, type PlaygroundForm, toRequest, toRerankRequest } from "../PlaygroundRequest.ts"
import { PlanView, RerankResultView, type Result, ResultView } from "../PlaygroundResults.tsx"
import { clientFor, storedSecret } from "../Session.ts"
import { useSession } from "../SessionContext.ts"
import { useLoad } from "../useLoad.ts"

const runKeyStorage = "switchyard.console.playground-key"

const tasks = [
  { value: "embeddings", label: "Embeddings" },
  { value: "rerank", label: "Rerank" }
]

/**
 * The client model calls are made with. Model calls take a standard key; signed in with a
 * management key, the person gives one (kept in this tab only). They are sent once, without
 * retries: one click is one request (and at most one charge).
 */
const useRunner = () => {
  const session = useSession()
  const [runKey, setRunKey] = useState(() => sessionStorage.getItem(runKeyStorage) ?? "")
  const runner = useMemo(() => {
    const secret = session.isManagement ? runKey.trim() : (storedSecret() ?? "")
    return secret === "" ? null : clientFor(secret, 0)
  }, [session, runKey])
  useEffect(() => () => void runner?.close(), [runner])
  useEffect(() => {
    if (runKey.trim() === "") sessionStorage.removeItem(runKeyStorage)
    else sessionStorage.setItem(runKeyStorage, runKey.trim())
  }, [runKey])
  return { runner, runKey, setRunKey }
}

/** What the form's two buttons do: explain the route (no provider called), then send it for real. */
const useCalls = (runner: ReturnType<typeof useRunner>["runner"], form: PlaygroundForm) => {
  const [plan, setPlan] = useState<RoutePlanReport | null>(null)
  const [result, setResult] = useState<Result | null>(null)
  const [reranked, setReranked] = useState<{ readonly body: RerankResponse; readonly ms: number } | null>(null)
  const [error, setError] = useState<unknown>(null)
  const [busy, setBusy] = useState<"plan" | "send" | null>(null)
  const rerank = form.task === "rerank"
  const request = toRequest(form)
  const rerankRequest = toRerankRequest(form)

  const starting = (what: "plan" | "send") => {
    setBusy(what)
    setError(null)
    setResult(null)
    setReranked(null)
  }
  // A failed call leaves only its error: no earlier answer or plan under it reads as this one's.
  const failed = (cause: unknown) => {
    setPlan(null)
    setError(cause)
  }
  const explain = () => {
    if (runner === null) return
    starting("plan")
    const planned = rerank ? runner.rerank.plan({ payload: rerankRequest }) : runner.embeddings.plan({ payload: request })
    planned.then(setPlan, failed).finally(() => setBusy(null))
  }
  const send = () => {
    if (runner === null) return
    starting("send")
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
  const clear = () => {
    setPlan(null)
    setResult(null)
    setReranked(null)
  }
  return { body: rerank ? rerankRequest : request, plan, result, reranked, error, busy, explain, send, clear }
}

export const PlaygroundPage = () => {
  const session = useSession()
  const [form, setForm] = useState<PlaygroundForm>(emptyForm)
  const { runner, runKey, setRunKey } = useRunner()
  const rerank = form.task === "rerank"
  const models = useLoad(
    ["models", session.client, form.task],
    (signal) =>
      rerank
        ? session.client.rerank.listModels({ query: {} }, { signal })
        : session.client.embeddings.listModels({ query: {} }, { signal })
  )
  const calls = useCalls(runner, form)

  useEffect(() => {
    const first = models.data?.data[0]
    if (form.model === "" && first !== undefined) setForm((f) => ({ ...f, model: first.id }))
  }, [models.data, form.model])

  const set: SetField = (key) => (value) => setForm((f) => ({ ...f, [key]: value }))
  // Another task lists other models: the first of the new list is picked.
  const switchTask = (task: PlaygroundForm["task"]) => {
    setForm((f) => ({ ...f, task, model: "" }))
    calls.clear()
  }

  return (
    <>
      <PageHeader
        title="Route playground"
        description="Write an embeddings or rerank request and see the route the gateway would take, without calling any provider; then send it for real if you want."
      />
      <SimpleGrid cols={{ base: 1, lg: 2 }} spacing="lg">
        <form
          onSubmit={(event) => {
            event.preventDefault()
            calls.explain()
          }}
          aria-label={rerank ? "Rerank request" : "Embeddings request"}
        >
          <Stack>
            <SegmentedControl aria-label="Task" data={tasks} value={form.task} onChange={(value) => switchTask(value as PlaygroundForm["task"])} />
            {session.isManagement && (
              <PasswordInput
                label="Standard key to run with"
                description="Model calls take a standard key; a management key only manages. Kept in this tab only."
                value={runKey}
                autoComplete="off"
                onChange={(event) => setRunKey(event.currentTarget.value)}
              />
            )}
            <RequestFields form={form} set={set} models={models.data?.data ?? []} modelsFailed={models.error !== undefined} />
            <PreferenceFields form={form} set={set} />
            <Text size="sm" fw={500} id="request-body-label">Request body</Text>
            <Code block tabIndex={0} aria-labelledby="request-body-label">{JSON.stringify(calls.body, null, 2)}</Code>
            <Group>
              <Button type="submit" loading={calls.busy === "plan"} disabled={runner === null}>Explain route</Button>
              <Button variant="light" onClick={calls.send} loading={calls.busy === "send"} disabled={runner === null || calls.plan === null}>
                Send for real
              </Button>
            </Group>
            {runner === null && <Text size="sm" c="dimmed">Give a standard key above to explain or send requests.</Text>}
          </Stack>
        </form>
        <Stack>
          <ErrorNotice error={calls.error} />
          {calls.result !== null && <ResultView result={calls.result} />}
          {calls.reranked !== null && <RerankResultView body={calls.reranked.body} ms={calls.reranked.ms} />}
          {calls.plan !== null ? <PlanView plan={calls.plan} /> : calls.error === null && (
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
