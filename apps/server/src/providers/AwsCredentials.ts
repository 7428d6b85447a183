import * as UpstreamError from "@switchyard/core/upstream/UpstreamError"
import { Clock, Effect } from "effect"

/**
 * An AWS credential as the default chain hands it out; `expiration` absent for long-lived keys.
 */
export interface AwsCredential {
  readonly accessKeyId: string
  readonly secretAccessKey: string
  readonly sessionToken?: string
  readonly expiration?: Date
}

/**
 * Where credentials come from: `@aws-sdk/credential-providers`' `fromNodeProviderChain`
 * (environment, shared profile, web identity, container and instance roles), asked again with
 * `forceRefresh` when the one held is about to expire.
 */
export type CredentialSource = (options?: { readonly forceRefresh?: boolean }) => Promise<AwsCredential>

/** A credential is replaced this long before it expires, as the AWS SDKs do. */
const refreshBeforeMs = 5 * 60_000

/**
 * The chain's credential, fetched once and held until {@link refreshBeforeMs} before it expires
 * (by the Effect clock, so tests move time with `TestClock`). Concurrent calls that find it
 * missing or stale share one fetch.
 */
export const make = (source: CredentialSource) => {
  let held: AwsCredential | undefined
  let fetching: Promise<AwsCredential> | undefined
  const fresh = (credential: AwsCredential, now: number) =>
    credential.expiration === undefined || credential.expiration.getTime() - now > refreshBeforeMs
  const fetch = (forceRefresh: boolean) =>
    fetching ??= source({ forceRefresh }).then(
      (credential) => {
        held = credential
        fetching = undefined
        return credential
      },
      (error: unknown) => {
        fetching = undefined
        throw error
      }
    )
  return Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    if (held !== undefined && fresh(held, now)) return held
    const stale = held !== undefined
    return yield* Effect.tryPromise({
      try: () => fetch(stale),
      // The chain's messages name where it looked, never a secret.
      catch: (cause) =>
        UpstreamError.unreachable(`no AWS credentials: ${cause instanceof Error ? cause.message.slice(0, 300) : "the credential chain failed"}`)
    })
  })
}
