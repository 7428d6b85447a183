import { assert, describe, it } from "vitest"
import * as ProviderJobs from "../src/ProviderJobs.ts"

describe("ProviderJobs", () => {
  it("sums a batch's jobs by provider: their lines, how many stand where, their ids at the provider", () => {
    assert.deepStrictEqual(ProviderJobs.byProvider([]), [])
    assert.deepStrictEqual(
      ProviderJobs.byProvider([
        { provider: "gemini", job_id: "batches/1", status: "completed", lines: 256 },
        { provider: "mistral", job_id: null, status: "submitting", lines: 10 },
        { provider: "gemini", job_id: "batches/2", status: "in_progress", lines: 256 },
        { provider: "gemini", job_id: "batches/3", status: "in_progress", lines: 100 }
      ]),
      [
        { provider: "gemini", jobs: 3, lines: 612, statuses: [["in_progress", 2], ["completed", 1]], ids: ["batches/1", "batches/2", "batches/3"] },
        { provider: "mistral", jobs: 1, lines: 10, statuses: [["submitting", 1]], ids: [] }
      ]
    )
  })
})
