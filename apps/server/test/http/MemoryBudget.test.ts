import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as fc from "fast-check"
import * as AnswerAdmission from "../../src/http/AnswerAdmission.ts"
import type * as FairShare from "../../src/http/FairShare.ts"
import * as MemoryBudget from "../../src/http/MemoryBudget.ts"

const MiB = 1024 * 1024
const files = (entries: Record<string, string>): MemoryBudget.ReadFile => (path) => entries[path]

describe("MemoryBudget: the container's memory limit", () => {
  it("reads cgroup v2's memory.max of the process's own cgroup", () => {
    const read = files({
      "/proc/self/cgroup": "0::/kubepods/burstable/pod1/abc\n",
      "/sys/fs/cgroup/kubepods/burstable/pod1/abc/memory.max": "268435456\n"
    })
    assert.strictEqual(MemoryBudget.readLimit(read), 256 * MiB)
  })

  it("reads cgroup v2 at the root inside a cgroup namespace (the own cgroup is /)", () => {
    assert.strictEqual(MemoryBudget.readLimit(files({ "/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "536870912" })), 512 * MiB)
    assert.strictEqual(MemoryBudget.readLimit(files({ "/proc/self/cgroup": "0::/\n", "/sys/fs/cgroup/memory.max": "max\n" })), undefined)
  })

  it("reads cgroup v1's memory.limit_in_bytes of the memory controller's cgroup; its 'unlimited' is none", () => {
    const cgroup = "9:name=systemd:/\n4:memory:/process_api/bd19\n3:cpuset:/\n0::/\n"
    assert.deepStrictEqual(MemoryBudget.cgroupPaths(cgroup), { v2: "/", v1Memory: "/process_api/bd19" })
    assert.strictEqual(
      MemoryBudget.readLimit(files({ "/proc/self/cgroup": cgroup, "/sys/fs/cgroup/memory/process_api/bd19/memory.limit_in_bytes": "1073741824\n" })),
      1024 * MiB
    )
    assert.strictEqual(
      MemoryBudget.readLimit(files({ "/proc/self/cgroup": cgroup, "/sys/fs/cgroup/memory/process_api/bd19/memory.limit_in_bytes": "9223372036854771712\n" })),
      undefined
    )
    // A controller listed with others ("4:memory,hugetlb:/x").
    assert.deepStrictEqual(MemoryBudget.cgroupPaths("4:hugetlb,memory:/x\n"), { v1Memory: "/x" })
  })

  it("no cgroup files at all: no limit; garbage is no limit", () => {
    assert.strictEqual(MemoryBudget.readLimit(files({})), undefined)
    assert.strictEqual(MemoryBudget.parseLimit("lots"), undefined)
    assert.strictEqual(MemoryBudget.parseLimit(""), undefined)
  })
})

describe("MemoryBudget: the bytes in flight", () => {
  it("half of what the limit leaves above 192 MiB, at least 32 MiB; a quarter of the machine (at most 2 GiB) without a limit", () => {
    assert.strictEqual(MemoryBudget.budgetFor(256 * MiB, 64 * 1024 * MiB), 32 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(512 * MiB, 64 * 1024 * MiB), 160 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(1024 * MiB, 64 * 1024 * MiB), 416 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(128 * MiB, 64 * 1024 * MiB), 32 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(undefined, 4 * 1024 * MiB), 1024 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(undefined, 64 * 1024 * MiB), 2048 * MiB)
  })

  it("shares the limit between the workers of one container (SWITCHYARD_WORKERS): each counts on its part", () => {
    assert.strictEqual(MemoryBudget.budgetFor(1024 * MiB, 64 * 1024 * MiB, 2), 160 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(2048 * MiB, 64 * 1024 * MiB, 4), 160 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(512 * MiB, 64 * 1024 * MiB, 4), 32 * MiB)
    assert.strictEqual(MemoryBudget.budgetFor(undefined, 64 * 1024 * MiB, 2), 1024 * MiB)
    assert.strictEqual(MemoryBudget.describe(MemoryBudget.MemoryBudget.make(160 * MiB, 1024 * MiB, { workers: 2 })),
      "memory: cgroup limit 1024 MiB shared by 2 workers, request bytes in flight at most 160 MiB each, 25% of it per workspace while others need it")
    assert.strictEqual(MemoryBudget.describe(MemoryBudget.MemoryBudget.make(1024 * MiB, undefined, { workers: 2 })),
      "memory: no cgroup limit, 2 workers, request bytes in flight at most 1024 MiB each, 25% of it per workspace while others need it")
    assert.strictEqual(MemoryBudget.describe(MemoryBudget.MemoryBudget.make(160 * MiB, 512 * MiB)),
      "memory: cgroup limit 512 MiB, request bytes in flight at most 160 MiB, 25% of it per workspace while others need it")
  })

  it("takes what fits, refuses what does not, lets one request through alone, gives back what is released", () => {
    const budget = MemoryBudget.MemoryBudget.make(100, undefined)
    assert.strictEqual(budget.tryTake(alone, 150)._tag, "Take", "alone, whatever its size (the body limit bounds it)")
    assert.strictEqual(budget.tryTake(alone, 1)._tag, "Full", "a lone tenant whose own requests hold the budget")
    budget.release(alone, 150)
    assert.strictEqual(budget.tryTake(alone, 60)._tag, "Take")
    assert.strictEqual(budget.tryTake(alone, 40)._tag, "Take")
    assert.strictEqual(budget.tryTake(alone, 1)._tag, "Full")
    assert.strictEqual(budget.heldBytes(), 100)
    budget.hold(alone, 10)
    assert.strictEqual(budget.heldBytes(), 110)
    budget.release(alone, 110)
    assert.strictEqual(budget.heldBytes(), 0)
    assert.deepStrictEqual(budget.heldByWorkspace(), [])
    assert.strictEqual(MemoryBudget.chargeFor(1000), 3000)
  })

  it("a request that holds its own body's charge and nothing else beside it is alone", () => {
    const budget = MemoryBudget.MemoryBudget.make(100, undefined)
    assert.strictEqual(budget.tryTake(alone, 70)._tag, "Take")
    assert.strictEqual(budget.tryTake(alone, 50, 70)._tag, "Take")
    assert.strictEqual(budget.tryTake(alone, 10, 70)._tag, "Full", "now another answer is held beside it")
    budget.release(alone, 120)
  })
})

const alone: FairShare.Owner = { workspace: "w-alone", key: "k-alone" }
const a1: FairShare.Owner = { workspace: "w-a", key: "k-a1" }
const a2: FairShare.Owner = { workspace: "w-a", key: "k-a2" }
const b1: FairShare.Owner = { workspace: "w-b", key: "k-b1" }

describe("MemoryBudget: fair shares by workspace and key (work-conserving)", () => {
  it("alone, a workspace uses the whole budget", () => {
    const budget = MemoryBudget.MemoryBudget.make(100, undefined, { sharePercent: 25 })
    for (let i = 0; i < 10; i++) assert.strictEqual(budget.tryTake(a1, 10)._tag, "Take")
    assert.strictEqual(budget.heldBytes(), 100)
    assert.deepStrictEqual(budget.heldByWorkspace(), [["w-a", 100]])
  })

  it.effect("under contention the workspace over its share is refused, naming its share; the one below waits and is served first", () =>
    Effect.gen(function*() {
      const budget = MemoryBudget.MemoryBudget.make(100, undefined, { sharePercent: 25 })
      for (let i = 0; i < 9; i++) budget.tryTake(a1, 10)
      // Another workspace's request does not fit beside the 90: it waits (it holds nothing).
      const waiting = yield* Effect.forkChild(budget.acquire(b1, 20, { waitMs: 5_000 }))
      yield* Effect.yieldNow
      assert.isUndefined(waiting.pollUnsafe())
      // Even what would fit is refused to the workspace over its share while another waits.
      const refused = yield* Effect.flip(budget.acquire(a1, 5, { waitMs: 5_000 }))
      assert.strictEqual(refused.reason, "share")
      assert.strictEqual(refused.level, "workspace")
      assert.include(refused.message, "25% of the budget")
      // What the first releases goes to the one waiting.
      budget.release(a1, 10)
      budget.release(a1, 10)
      yield* Fiber.join(waiting)
      assert.deepStrictEqual(Object.fromEntries(budget.heldByWorkspace()), { "w-a": 70, "w-b": 20 })
      // Nobody waits now: what fits is taken again, whoever asks.
      assert.strictEqual(budget.tryTake(a1, 10)._tag, "Take")
    }))

  it.effect("a wait is bounded on the clock: then a 503 (busy) and nothing charged; an interrupted wait leaves the line", () =>
    Effect.gen(function*() {
      const budget = MemoryBudget.MemoryBudget.make(100, undefined, { sharePercent: 25 })
      budget.tryTake(a1, 100)
      const waiting = yield* Effect.forkChild(Effect.flip(budget.acquire(b1, 10, { waitMs: 1_000 })))
      yield* TestClock.adjust("999 millis")
      assert.isUndefined(waiting.pollUnsafe())
      yield* TestClock.adjust("1 millis")
      assert.strictEqual((yield* Fiber.join(waiting)).reason, "busy")
      const interrupted = yield* Effect.forkChild(budget.acquire(b1, 10, { waitMs: 1_000 }))
      yield* Effect.yieldNow
      yield* Fiber.interrupt(interrupted)
      // Nobody waits any more: the over-share workspace is not refused for a waiter that left.
      budget.release(a1, 50)
      assert.strictEqual(budget.tryTake(a1, 10)._tag, "Take")
      assert.strictEqual(budget.heldBytes(), 60)
    }))

  it.effect("within a workspace, the key over its share yields to the workspace's other keys", () =>
    Effect.gen(function*() {
      const budget = MemoryBudget.MemoryBudget.make(100, undefined, { sharePercent: 25 })
      budget.tryTake(a1, 95)
      const waiting = yield* Effect.forkChild(budget.acquire(a2, 10, { waitMs: 5_000 }))
      yield* Effect.yieldNow
      const refused = yield* Effect.flip(budget.acquire(a1, 1, { waitMs: 5_000 }))
      assert.strictEqual(refused.reason, "share")
      assert.strictEqual(refused.level, "key")
      budget.release(a1, 10)
      yield* Fiber.join(waiting)
    }))

  it.effect("a waiter below its share makes room by cutting the bodies still arriving of a workspace over its share", () =>
    Effect.gen(function*() {
      const budget = MemoryBudget.MemoryBudget.make(100, undefined, { sharePercent: 25 })
      const cut: Array<string> = []
      for (const name of ["first", "second", "third", "fourth"]) {
        budget.tryTake(a1, 25)
        budget.cuttable(a1, 25, (refused) => {
          assert.strictEqual(refused.level, "workspace")
          cut.push(name)
          // The cut request ends soon after (its fiber interrupted): its charge goes.
          setTimeout(() => budget.release(a1, 25), 0)
          return true
        })
      }
      yield* budget.acquire(b1, 40, { waitMs: 5_000 }).pipe(Effect.forkChild, Effect.flatMap(Fiber.join))
      assert.deepStrictEqual(cut, ["fourth", "third"], "the latest first, only as many as make room")
    }), { timeout: 5_000 })

  it("a workspace below its share is never refused, whatever the others hold or ask (property)", () => {
    const owners = [a1, a2, b1, { workspace: "w-c", key: "k-c" }]
    const step = fc.record({ who: fc.nat({ max: owners.length - 1 }), bytes: fc.integer({ min: 1, max: 60 }), release: fc.boolean() })
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const budget = MemoryBudget.MemoryBudget.make(100, undefined, { sharePercent: 25 })
        const held: Array<[FairShare.Owner, number]> = []
        for (const { who, bytes, release } of steps) {
          const owner = owners[who]!
          if (release && held.length > 0) {
            const [o, b] = held.splice(bytes % held.length, 1)[0]!
            budget.release(o, b)
            continue
          }
          const workspaceHeld = held.filter(([o]) => o.workspace === owner.workspace).reduce((n, [, b]) => n + b, 0)
          const keyHeld = held.filter(([o]) => o === owner).reduce((n, [, b]) => n + b, 0)
          const decision = budget.tryTake(owner, bytes)
          if (decision._tag === "Take") held.push([owner, bytes])
          if (decision._tag === "OverShare") {
            assert.isAtLeast(decision.level === "workspace" ? workspaceHeld : keyHeld, 25, "refused for its share only at its share or above")
          }
          // Work-conserving: what fits is never refused while nobody waits (tryTake never waits).
          if (held.reduce((n, [, b]) => n + b, 0) - (decision._tag === "Take" ? bytes : 0) + bytes <= 100) {
            assert.strictEqual(decision._tag, "Take")
          }
        }
        for (const [o, b] of held) budget.release(o, b)
        assert.strictEqual(budget.heldBytes(), 0)
        assert.deepStrictEqual(budget.heldByWorkspace(), [])
      }),
      { numRuns: 200 }
    )
  })
})

describe("AnswerAdmission: what an answer holds", () => {
  it("counts inputs × dimensions at 22 bytes a float or 16/3 a base64 value, twice (upstream answers and the answer)", () => {
    const float = AnswerAdmission.embeddings(2000, 1536, "float")
    assert.strictEqual(float.bytes, 2000 * 2 * (1536 * 22 + 64))
    assert.strictEqual(float.what, "2000 inputs × 1536 dimensions as float JSON")
    assert.strictEqual(AnswerAdmission.embeddings(2000, 1536, "base64").bytes, 2000 * 2 * (8192 + 64))
    // 22 bytes a value is at least what JSON.stringify writes for a unit vector's float32 values
    // (of either sign, a few of them tiny); only vectors of tiny values throughout reach 24.
    const raw = Array.from({ length: 1536 }, (_, i) => Math.sin(i * 7.3) * (i % 97 === 0 ? 1e-6 : 1))
    const norm = Math.hypot(...raw)
    const values = raw.map((x) => Math.fround(x / norm))
    assert.isAtMost(JSON.stringify(values).length / values.length, AnswerAdmission.floatValueBytes)
    const rerank = AnswerAdmission.rerank([1000, 3000], true)
    assert.strictEqual(rerank.bytes, 4200)
    assert.strictEqual(AnswerAdmission.rerank([1000, 3000], false).bytes, 200)
  })

  it.effect("refuses with 413 past the budget, 503 while busy, and a batch line waits on the clock until the bytes are released", () =>
    Effect.gen(function*() {
      const budget = MemoryBudget.MemoryBudget.make(100_000_000, undefined)
      const large = AnswerAdmission.embeddings(3000, 1536, "float")
      const refused = yield* Effect.exit(Effect.void.pipe(AnswerAdmission.charged(budget, a1, large)))
      assert.isTrue(Exit.isFailure(refused))
      const tooLarge = yield* Effect.flip(Effect.void.pipe(AnswerAdmission.charged(budget, a1, large)))
      assert.strictEqual(tooLarge._tag, "AnswerTooLarge")
      assert.include(tooLarge.message, "at most 1476 inputs")
      const one = AnswerAdmission.embeddings(500, 1536, "float")
      budget.hold(a1, 80_000_000)
      const busy = yield* Effect.flip(Effect.void.pipe(AnswerAdmission.charged(budget, a1, one)))
      assert.strictEqual(busy._tag, "MemoryBusy")
      const waiting = yield* Effect.forkChild(Effect.succeed("served").pipe(AnswerAdmission.charged(budget, a1, one, { wait: true })))
      yield* TestClock.adjust("10 seconds")
      assert.isUndefined(waiting.pollUnsafe(), "still waiting while the bytes are held")
      budget.release(a1, 80_000_000)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(waiting), "served")
      assert.strictEqual(budget.heldBytes(), 0, "released once served")
    }))
})
