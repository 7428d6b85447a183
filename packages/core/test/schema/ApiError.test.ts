import { assert, describe, it } from "@effect/vitest"
import * as ApiError from "../../src/schema/ApiError.ts"

describe("ApiError.statusOf", () => {
  it("answers each error's own HTTP status: the one its class declares and the wire table keys it under", () => {
    const classes = [
      ApiError.BadRequest,
      ApiError.Unauthorized,
      ApiError.PaymentRequired,
      ApiError.Forbidden,
      ApiError.NotFound,
      ApiError.RequestTimeout,
      ApiError.PayloadTooLarge,
      ApiError.TooManyRequests,
      ApiError.InternalError,
      ApiError.BadGateway,
      ApiError.ServiceUnavailable,
      ApiError.UpstreamTimeout,
      ApiError.UpstreamOverloaded
    ]
    const statuses = classes.map((Class) => ApiError.statusOf(new Class({ message: "m" })))
    assert.deepStrictEqual(statuses, [400, 401, 402, 403, 404, 408, 413, 429, 500, 502, 503, 524, 529])
    for (const status of statuses) assert.strictEqual(ApiError.statusOf(ApiError.fromStatus(status, "m")), status)
  })
})
