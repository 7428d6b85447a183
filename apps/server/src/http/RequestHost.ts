import { Config } from "effect"

/**
 * `SWITCHYARD_TRUST_PROXY=true`: the gateway sits behind a reverse proxy, whose `X-Forwarded-*`
 * headers are believed. Off by default, since any client can send them.
 */
export const TrustProxyConfig = Config.Boolean("SWITCHYARD_TRUST_PROXY").pipe(Config.withDefault(false))

/**
 * A host name as rules compare it: lower-cased, without port or trailing dot.
 */
export const normalize = (host: string | undefined): string =>
  (host ?? "").trim().toLowerCase().replace(/:\d+$/u, "").replace(/\.$/u, "")

/**
 * The host name a request was addressed to. Behind a trusted proxy it is the first value of
 * `X-Forwarded-Host` (what the client asked the first proxy for; each proxy appends its own),
 * else `Host`; a proxy that sends no `X-Forwarded-Host` leaves `Host` as it came.
 */
export const of = (headers: Readonly<Record<string, string | undefined>>, trustProxy: boolean): string => {
  const forwarded = trustProxy ? headers["x-forwarded-host"]?.split(",")[0]?.trim() : undefined
  return normalize(forwarded !== undefined && forwarded.length > 0 ? forwarded : headers.host)
}
