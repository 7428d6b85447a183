import { Group, Select, SimpleGrid, Switch, Textarea, TextInput } from "@mantine/core"
import type { PlaygroundForm } from "./PlaygroundRequest.ts"

/**
 * The route playground's request fields: the model and what is sent to it, and the provider
 * preferences that steer the route.
 */

/** Sets one field of the form. */
export type SetField = <K extends keyof PlaygroundForm>(key: K) => (value: PlaygroundForm[K]) => void

const sorts = [
  { value: "none", label: "None (load balanced)" },
  { value: "price", label: "Price" },
  { value: "throughput", label: "Throughput" },
  { value: "latency", label: "Latency" },
  { value: "exacto", label: "Exacto (precision)" }
]

/** The model (of those the task lists), the rerank query, and the inputs or documents, one a line. */
export const RequestFields = ({ form, set, models, modelsFailed }: {
  readonly form: PlaygroundForm
  readonly set: SetField
  readonly models: ReadonlyArray<{ readonly id: string; readonly name: string }>
  readonly modelsFailed: boolean
}) => {
  const rerank = form.task === "rerank"
  return (
    <>
      <Select
        label="Model"
        searchable
        required
        data={models.map((model) => ({ value: model.id, label: `${model.id} (${model.name})` }))}
        value={form.model === "" ? null : form.model}
        onChange={(value) => set("model")(value ?? "")}
        error={modelsFailed ? "The model list could not be loaded" : undefined}
      />
      {rerank && <TextInput label="Query" required value={form.query} onChange={(e) => set("query")(e.currentTarget.value)} />}
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
    </>
  )
}

/** The provider preferences: order, allow and deny lists, sort, price cap, width, and the data policies. */
export const PreferenceFields = ({ form, set }: { readonly form: PlaygroundForm; readonly set: SetField }) => (
  <>
    <SimpleGrid cols={{ base: 1, sm: 2 }}>
      <TextInput label="Order" description="Provider slugs, comma-separated" value={form.order} onChange={(e) => set("order")(e.currentTarget.value)} />
      <TextInput label="Only" description="Allow only these providers" value={form.only} onChange={(e) => set("only")(e.currentTarget.value)} />
      <TextInput label="Ignore" description="Never use these providers" value={form.ignore} onChange={(e) => set("ignore")(e.currentTarget.value)} />
      <TextInput label="Quantizations" description="For example fp16, bf16" value={form.quantizations} onChange={(e) => set("quantizations")(e.currentTarget.value)} />
      <Select label="Sort" data={sorts} allowDeselect={false} value={form.sort} onChange={(value) => set("sort")((value ?? "none") as PlaygroundForm["sort"])} />
      <TextInput label="Max prompt price" description="USD per million tokens" inputMode="decimal" value={form.maxPromptPrice} onChange={(e) => set("maxPromptPrice")(e.currentTarget.value)} />
      {form.task !== "rerank" && (
        <TextInput label="Dimensions" inputMode="numeric" value={form.dimensions} onChange={(e) => set("dimensions")(e.currentTarget.value)} />
      )}
    </SimpleGrid>
    <Group>
      <Switch label="Allow fallbacks" checked={form.allowFallbacks} onChange={(e) => set("allowFallbacks")(e.currentTarget.checked)} />
      <Switch label="Zero data retention only" checked={form.zdr} onChange={(e) => set("zdr")(e.currentTarget.checked)} />
      <Switch label="Deny data collection" checked={form.denyDataCollection} onChange={(e) => set("denyDataCollection")(e.currentTarget.checked)} />
    </Group>
  </>
)
