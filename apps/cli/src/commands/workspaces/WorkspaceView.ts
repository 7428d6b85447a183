import type { WorkspaceMember, WorkspaceRecord } from "@switchyard/core/schema/Workspace"
import { Argument, Flag } from "effect/cli"
import type * as Output from "../../Output.ts"

export const refArgument = Argument.String("workspace").pipe(Argument.withDescription("The workspace's id or slug"))

/** `--cache on|off|config`: the workspace's embeddings cache switch (`config`: the config file decides). */
export const cacheFlag = Flag.ChoiceWithValue("cache", [["on", true], ["off", false], ["config", null]] as const).pipe(
  Flag.withDescription("Embeddings cache for the workspace: on, off, or config (as the gateway's config file says)"),
  Flag.optional
)

/** A provider list flag of `workspaces update`: comma-separated slugs, or `config` (the config file's list again). */
export const providerListFlag = (name: string, description: string) =>
  Flag.String(name).pipe(
    Flag.withMetavar("SLUGS|config"),
    Flag.withDescription(`${description}: comma-separated provider slugs, or config (as the gateway's config file says)`),
    Flag.map((text) => text === "config" ? null : text.split(",").map((slug) => slug.trim()).filter((slug) => slug !== "")),
    Flag.optional
  )

/** `--data-collection allow|deny|config`. */
export const dataCollectionFlag = Flag.ChoiceWithValue("data-collection", [["allow", "allow"], ["deny", "deny"], ["config", null]] as const).pipe(
  Flag.withDescription("Providers that may keep or train on the workspace's data: allow, deny, or config"),
  Flag.optional
)

/** `--zdr on|off|config`. */
export const zdrFlag = Flag.ChoiceWithValue("zdr", [["on", true], ["off", false], ["config", null]] as const).pipe(
  Flag.withDescription("Only zero-data-retention endpoints: on, off, or config"),
  Flag.optional
)

export const columns: ReadonlyArray<Output.Column<WorkspaceRecord>> = [
  { header: "SLUG", value: (w) => w.slug },
  { header: "NAME", value: (w) => w.name },
  { header: "ID", value: (w) => w.id },
  { header: "CREATED", value: (w) => w.created_at.slice(0, 10) }
]

export const pairs = (w: WorkspaceRecord): ReadonlyArray<readonly [string, string]> => [
  ["id", w.id],
  ["slug", w.slug],
  ["name", w.name],
  ["description", w.description ?? "-"],
  ["default text model", w.default_text_model ?? "-"],
  ["default provider sort", w.default_provider_sort ?? "-"],
  ["BYOK in budgets", w.include_byok_in_budgets ? "yes" : "no"],
  ["embeddings cache", w.cache ? "on" : "off"],
  ["only providers", w.only === null ? "all" : w.only.join(", ") || "none"],
  ["ignored providers", w.ignore.join(", ") || "-"],
  ["data collection", w.data_collection],
  ["ZDR only", w.zdr ? "yes" : "no"],
  ["created", w.created_at],
  ["updated", w.updated_at ?? "-"]
]

export const memberColumns: ReadonlyArray<Output.Column<WorkspaceMember>> = [
  { header: "USER", value: (m) => m.user_id },
  { header: "ROLE", value: (m) => m.role },
  { header: "SINCE", value: (m) => m.created_at.slice(0, 10) }
]
