import type { ProviderJob, ProviderJobStatus } from "@switchyard/core/schema/Batch"

/** A batch's jobs at one provider's batch API: how many, the lines they hold, where they stand. */
export interface ProviderJobs {
  readonly provider: string
  readonly jobs: number
  readonly lines: number
  /** Each status its jobs are at, with how many are, in the order a job goes through them. */
  readonly statuses: ReadonlyArray<readonly [ProviderJobStatus, number]>
  /** The jobs' ids at the provider, those made so far. */
  readonly ids: ReadonlyArray<string>
}

const order: ReadonlyArray<ProviderJobStatus> = ["submitting", "in_progress", "cancelling", "completed", "live", "failed", "expired", "cancelled"]

/** A batch's provider jobs by provider, in the order the providers first appear. */
export const byProvider = (jobs: ReadonlyArray<ProviderJob>): ReadonlyArray<ProviderJobs> => {
  const providers = [...new Set(jobs.map((job) => job.provider))]
  return providers.map((provider) => {
    const own = jobs.filter((job) => job.provider === provider)
    return {
      provider,
      jobs: own.length,
      lines: own.reduce((n, job) => n + job.lines, 0),
      statuses: order.flatMap((status) => {
        const count = own.filter((job) => job.status === status).length
        return count === 0 ? [] : [[status, count] as const]
      }),
      ids: own.flatMap((job) => (job.job_id === null ? [] : [job.job_id]))
    }
  })
}
