import { Clock, Effect } from "effect"
import * as RandomPool from "./RandomPool.ts"

/**
 * Generation ids: `gen-<task>-<time>-<random>`, the time the id was made (from Effect's `Clock`)
 * in milliseconds, base 36, then 9 random bytes as base64url. The time lets `GET /generation` tell
 * an id whose ledger row was pruned (made before the retention's cut) from an unknown one.
 */
export const make = (task: "emb" | "rr"): Effect.Effect<string> =>
  Effect.map(Clock.currentTimeMillis, (ms) => `gen-${task}-${ms.toString(36)}-${RandomPool.base64url(9)}`)

const shape = /^gen-[a-z]+-([0-9a-z]{1,11})-[A-Za-z0-9_-]+$/u

/** When the id was made (epoch milliseconds); `undefined` when it is not one this gateway makes. */
export const timeOf = (id: string): number | undefined => {
  const match = shape.exec(id)
  if (match === null) return undefined
  const ms = Number.parseInt(match[1]!, 36)
  return Number.isSafeInteger(ms) ? ms : undefined
}
