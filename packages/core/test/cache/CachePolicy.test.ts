import { describe, expect, it } from "@effect/vitest"
import * as CachePolicy from "@switchyard/core/cache/CachePolicy"
import { Result } from "effect"

describe("CachePolicy", () => {
  it("reads the header's two values in any case and refuses others", () => {
    expect(CachePolicy.directive(undefined)).toEqual(Result.succeed("default"))
    expect(CachePolicy.directive(" Bypass ")).toEqual(Result.succeed("bypass"))
    expect(CachePolicy.directive("REFRESH")).toEqual(Result.succeed("refresh"))
    expect(Result.isFailure(CachePolicy.directive("no-store"))).toBe(true)
  })

  it("does nothing for a workspace without the cache, whatever the header", () => {
    for (const directive of ["default", "bypass", "refresh"] as const) {
      expect(CachePolicy.policy({ enabled: false, directive, zdr: false })).toEqual({ read: false, write: false })
    }
  })

  it("reads and writes by default, writes only on refresh, neither on bypass", () => {
    expect(CachePolicy.policy({ enabled: true, directive: "default", zdr: false })).toEqual({ read: true, write: true })
    expect(CachePolicy.policy({ enabled: true, directive: "refresh", zdr: false })).toEqual({ read: false, write: true })
    expect(CachePolicy.policy({ enabled: true, directive: "bypass", zdr: false })).toEqual({ read: false, write: false })
  })

  it("never writes a zero-data-retention request", () => {
    expect(CachePolicy.policy({ enabled: true, directive: "default", zdr: true })).toEqual({ read: true, write: false })
    expect(CachePolicy.policy({ enabled: true, directive: "refresh", zdr: true })).toEqual({ read: false, write: false })
  })

  it("reports hit, partial, miss and bypass", () => {
    const on = { read: true, write: true }
    expect(CachePolicy.outcome(on, 3, 3)).toBe("hit")
    expect(CachePolicy.outcome(on, 3, 1)).toBe("partial")
    expect(CachePolicy.outcome(on, 3, 0)).toBe("miss")
    expect(CachePolicy.outcome({ read: false, write: true }, 3, 0)).toBe("miss")
    expect(CachePolicy.outcome({ read: false, write: false }, 3, 0)).toBe("bypass")
  })
})
