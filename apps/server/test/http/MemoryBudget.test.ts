import { assert, describe, it } from "@effect/vitest"
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
})
