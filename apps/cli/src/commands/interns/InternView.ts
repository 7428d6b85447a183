import { GatewayClient } from "@switchyard/client/GatewayClient"
import type { InternRecord } from "@switchyard/core/schema/Intern"
import { Effect } from "effect"
import { Argument } from "effect/cli"
import { Usage } from "../../Failure.ts"
import * as Output from "../../Output.ts"

export const columns: ReadonlyArray<Output.Column<InternRecord>> = [
  { header: "ID", value: (i) => i.id },
  { header: "NAME", value: (i) => i.name },
  { header: "STATUS", value: (i) => i.status },
  { header: "MODEL", value: (i) => i.model ?? "(workspace default)" },
  { header: "HOSTNAME", value: (i) => i.hostname ?? "-" },
  { header: "UPDATED", value: (i) => Output.date(i.updatedAt) }
]

const clip = (text: string | null, size = 80) => {
  if (text === null) return "-"
  const flat = text.replace(/\s+/gu, " ").trim()
  return [...flat].length > size ? `${[...flat].slice(0, size - 1).join("")}… (${[...text].length} characters)` : flat
}

export const detail = (i: InternRecord) =>
  Output.record([
    ["id", i.id],
    ["name", i.name],
    ["status", i.status],
    ["progress", i.progress === null ? "-" : `${i.progress.step_label} (step ${i.progress.step_number} of ${i.progress.total_steps})`],
    ["last failure", i.lastFailureMessage ?? "-"],
    ["model", i.model ?? "(workspace default)"],
    ["hostname", i.hostname ?? "-"],
    ["description", clip(i.description)],
    ["instructions", clip(i.instructions)],
    ["vault", i.vault_id ?? "-"],
    ["attached vault", i.attached_vault_id ?? "-"],
    ["workspace", i.workspaceId],
    ["created", Output.date(i.createdAt)],
    ["updated", Output.date(i.updatedAt)]
  ])

export const idArgument = Argument.String("intern").pipe(
  Argument.withDescription("The intern's id, or its name")
)

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/iu

export const resolveId = Effect.fnUntraced(function*(given: string) {
  if (uuid.test(given.trim())) return given.trim()
  const client = yield* GatewayClient
  const matches: Array<InternRecord> = []
  let cursor: string | undefined
  do {
    const page = yield* client.interns.list({ query: { limit: 100, ...(cursor === undefined ? {} : { starting_after: cursor }) } })
    matches.push(...page.data.filter((i) => i.name === given))
    cursor = page.has_more ? page.next_cursor : undefined
  } while (cursor !== undefined)
  if (matches.length === 1) return matches[0]!.id
  return yield* new Usage({
    message: matches.length === 0 ? `No intern is named ${JSON.stringify(given)}` : `${matches.length} interns are named ${JSON.stringify(given)}`,
    hint: matches.length === 0
      ? "`switchyard interns list` shows the interns this key can see."
      : `Give the id instead: ${matches.map((i) => i.id).join(", ")}`
  })
})

export const readText = (path: string) =>
  Effect.tryPromise({
    try: () => import("node:fs").then((Fs) => Fs.promises.readFile(path, "utf8")),
    catch: (error) => new Usage({ message: `Cannot read ${path}: ${(error as NodeJS.ErrnoException).code === "ENOENT" ? "no such file" : String(error)}` })
  })
