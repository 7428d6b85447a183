import { assert, describe, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"
import { TestClock } from "effect/testing"
import * as AnswerAdmission from "../../src/http/AnswerAdmission.ts"
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
    assert.strictEqual(MemoryBudget.describe(MemoryBudget.MemoryBudget.make(160 * MiB, 1024 * MiB, 2)),
      "memory: cgroup limit 1024 MiB shared by 2 workers, request bytes in flight at most 160 MiB each")
    assert.strictEqual(MemoryBudget.describe(MemoryBudget.MemoryBudget.make(1024 * MiB, undefined, 2)),
      "memory: no cgroup limit, 2 workers, request bytes in flight at most 1024 MiB each")
    assert.strictEqual(MemoryBudget.describe(MemoryBudget.MemoryBudget.make(160 * MiB, 512 * MiB)),
      "memory: cgroup limit 512 MiB, request bytes in flight at most 160 MiB")
  })

  it("takes what fits, refuses what does not, lets one request through alone, gives back what is released", () => {
    const budget = MemoryBudget.MemoryBudget.make(100, undefined)
    assert.isTrue(budget.take(150), "alone, whatever its size (the body limit bounds it)")
    assert.isFalse(budget.take(1))
    budget.release(150)
    assert.isTrue(budget.take(60))
    assert.isTrue(budget.take(40))
    assert.isFalse(budget.take(1))
    assert.strictEqual(budget.heldBytes(), 100)
    budget.hold(10)
    assert.strictEqual(budget.heldBytes(), 110)
    budget.release(110)
    assert.strictEqual(budget.heldBytes(), 0)
    assert.strictEqual(MemoryBudget.chargeFor(1000), 3000)
  })

  it("admits an answer that fits beside what is held, says later for one that fits alone, never for one past the budget", () => {
    const budget = MemoryBudget.MemoryBudget.make(100, undefined)
    assert.strictEqual(budget.admit(101), "never")
    assert.strictEqual(budget.admit(60), "taken")
    assert.strictEqual(budget.admit(50), "later")
    assert.strictEqual(budget.heldBytes(), 60, "refused answers charge nothing")
    budget.release(60)
    // A request that holds its own body's charge and nothing else beside it is let through.
    assert.isTrue(budget.take(70))
    assert.strictEqual(budget.admit(50, 70), "taken")
    assert.strictEqual(budget.admit(10, 70), "later", "now another answer is held beside it")
    budget.release(120)
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
      const refused = yield* Effect.exit(Effect.void.pipe(AnswerAdmission.charged(budget, large)))
      assert.isTrue(Exit.isFailure(refused))
      const tooLarge = yield* Effect.flip(Effect.void.pipe(AnswerAdmission.charged(budget, large)))
      assert.strictEqual(tooLarge._tag, "AnswerTooLarge")
      assert.include(tooLarge.message, "at most 1476 inputs")
      const one = AnswerAdmission.embeddings(500, 1536, "float")
      budget.hold(80_000_000)
      const busy = yield* Effect.flip(Effect.void.pipe(AnswerAdmission.charged(budget, one)))
      assert.strictEqual(busy._tag, "MemoryBusy")
      const waiting = yield* Effect.forkChild(Effect.succeed("served").pipe(AnswerAdmission.charged(budget, one, { wait: true })))
      yield* TestClock.adjust("10 seconds")
      assert.isUndefined(waiting.pollUnsafe(), "still waiting while the bytes are held")
      budget.release(80_000_000)
      yield* TestClock.adjust("1 second")
      assert.strictEqual(yield* Fiber.join(waiting), "served")
      assert.strictEqual(budget.heldBytes(), 0, "released once served")
    }))
})
