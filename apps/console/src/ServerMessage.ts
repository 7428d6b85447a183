/**
 * What to show a person when a call failed: the gateway's own message when it answered with
 * one (every typed error of the contract carries it), else what went wrong on the way.
 */
export const serverMessage = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const tagged = error as {
      readonly _tag?: unknown
      readonly message?: unknown
      readonly reason?: { readonly _tag?: unknown; readonly response?: { readonly status?: unknown } }
    }
    if (tagged._tag === "HttpClientError") {
      const status = tagged.reason?.response?.status
      return typeof status === "number"
        ? `The gateway answered HTTP ${status}, which the console does not understand.`
        : "The gateway could not be reached. Check that it is running and try again."
    }
    if (typeof tagged.message === "string" && tagged.message.length > 0) return tagged.message
  }
  if (typeof error === "string" && error.length > 0) return error
  return "Something went wrong"
}

/**
 * The heading of a failed call: an upstream provider's failure (the gateway's answer names the
 * provider it tried last) is headed as the provider's, not as the gateway refusing the request.
 */
export const failureTitle = (error: unknown): string => {
  if (typeof error === "object" && error !== null) {
    const metadata = (error as { readonly metadata?: { readonly provider_name?: unknown; readonly reason?: unknown } }).metadata
    if (typeof metadata?.provider_name === "string") {
      return typeof metadata.reason === "string"
        ? `The upstream provider ${metadata.provider_name} failed (${metadata.reason})`
        : `The upstream provider ${metadata.provider_name} failed`
    }
  }
  return "The gateway refused"
}
