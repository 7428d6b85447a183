import type { BatchObject } from "@switchyard/core/schema/Batch"
import * as Output from "../../Output.ts"

const at = (seconds: number | null) => (seconds === null ? "-" : Output.date(new Date(seconds * 1000).toISOString()))

export const columns: ReadonlyArray<Output.Column<BatchObject>> = [
  { header: "ID", value: (b) => b.id },
  { header: "STATUS", value: (b) => b.status },
  { header: "ENDPOINT", value: (b) => b.endpoint },
  { header: "DONE", value: (b) => `${b.request_counts.completed}/${b.request_counts.total}`, align: "right" },
  { header: "FAILED", value: (b) => String(b.request_counts.failed), align: "right" },
  { header: "COST", value: (b) => Output.money(b.cost), align: "right" },
  { header: "CREATED", value: (b) => at(b.created_at) }
]

/** The workspace of each batch, for a list across workspaces. */
export const workspaceColumn: Output.Column<BatchObject> = { header: "WORKSPACE", value: (b) => b.workspace_id ?? "-" }

export const record = (b: BatchObject) =>
  Output.record([
    ["id", b.id],
    ["status", b.status],
    ["endpoint", b.endpoint],
    ["input file", b.input_file_id],
    ["lines", `${b.request_counts.total} (${b.request_counts.completed} served, ${b.request_counts.failed} failed)`],
    ["cost", Output.money(b.cost)],
    ["output file", b.output_file_id ?? "-"],
    ["error file", b.error_file_id ?? "-"],
    ["created", at(b.created_at)],
    ["finished", at(b.completed_at ?? b.cancelled_at ?? b.failed_at ?? null)],
    ...b.provider_jobs.map((j) => ["provider job", `${j.provider} ${j.job_id ?? "-"} ${j.status.replace("_", " ")} (${j.lines} lines)`] as const),
    ...(b.errors === null ? [] : b.errors.data.map((e) => ["error", `${e.code}: ${e.message}`] as const))
  ])

export const finished = (b: BatchObject) => b.status === "completed" || b.status === "failed" || b.status === "cancelled" || b.status === "expired"
