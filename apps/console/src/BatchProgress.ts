import type { BatchObject } from "@switchyard/core/schema/Batch"

type Status = BatchObject["status"]

/** Statuses a batch leaves by itself: the page reads it again while one shows. */
export const moving = (status: Status): boolean =>
  status === "validating" || status === "in_progress" || status === "finalizing" || status === "cancelling"

/** Statuses the gateway takes a cancel in (a cancel already asked for is not offered again). */
export const cancellable = (status: Status): boolean => status === "validating" || status === "in_progress"

/** The share of a batch's lines that are done, served or failed: 0 to 1 (0 before they are counted). */
export const done = (counts: BatchObject["request_counts"]): number =>
  counts.total <= 0 ? 0 : Math.min(1, (counts.completed + counts.failed) / counts.total)
