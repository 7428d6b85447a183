import { Config, Effect, Layer, Option, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { createHash, timingSafeEqual } from "node:crypto"
import { GatewayMetrics } from "./GatewayMetrics.ts"

/**
 * `SWITCHYARD_METRICS_TOKEN`: when set, `GET /metrics` needs `Authorization: Bearer <token>`.
 */
const MetricsTokenConfig = Config.option(Config.Redacted("SWITCHYARD_METRICS_TOKEN"))

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest()

// Both sides are hashed first, so the comparison takes the same time whatever the token's length.
const sameToken = (presented: string, expected: Buffer) => timingSafeEqual(digest(presented), expected)

const bearerOf = (header: string | undefined) => {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/iu.exec(header)
  return match === null ? undefined : match[1]
}

const unauthorized = (message: string) =>
  HttpServerResponse.jsonUnsafe({ error: { code: 401, message } }, {
    status: 401,
    headers: { "www-authenticate": "Bearer realm=\"metrics\"" }
  })

/**
 * `GET /metrics` at the listener's root: the Prometheus text exposition (version 0.0.4) of the
 * gateway's metrics and the process's.
 */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const token = Option.filter(yield* MetricsTokenConfig, (t) => Redacted.value(t).length > 0)
  const expected = Option.map(token, (t) => digest(Redacted.value(t)))
  const metrics = yield* GatewayMetrics
  return HttpRouter.add(
    "GET",
    "/metrics",
    Effect.gen(function*() {
      if (Option.isSome(expected)) {
        const request = yield* HttpServerRequest.HttpServerRequest
        const presented = bearerOf(request.headers.authorization)
        if (presented === undefined) {
          return unauthorized("Missing Authorization header: send `Authorization: Bearer <SWITCHYARD_METRICS_TOKEN>`")
        }
        if (!sameToken(presented, expected.value)) return unauthorized("Invalid metrics token")
      }
      const text = yield* metrics.render
      return HttpServerResponse.text(text, { contentType: metrics.contentType })
    })
  )
}))
