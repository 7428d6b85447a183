import { assert, describe, it } from "@effect/vitest"
import * as AuditChain from "@switchyard/core/audit/AuditChain"
import * as Crypto from "node:crypto"

const sha256 = (text: string) => Crypto.createHash("sha256").update(text, "utf8").digest("hex")

const chain = (n: number) => {
  const out: Array<AuditChain.StoredEntry & { hash: string }> = []
  let previous = AuditChain.genesis
  for (let id = 1; id <= n; id++) {
    const entry: AuditChain.StoredEntry = {
      id, at: 1_700_000_000_000 + id, actor_key_hash: "h", actor_key_name: "ops", actor_user_id: "u", workspace_id: "w",
      action: "key.create", target_type: "key", target_id: `k${id}`, before: null, after: `{"name":"k${id}"}`, ip: "127.0.0.1",
      request_id: `r${id}`, prev_hash: previous
    }
    const hash = sha256(AuditChain.canonical(entry))
    out.push({ ...entry, hash })
    previous = hash
  }
  return out
}

describe("AuditChain", () => {
  it("an entry without a person hashes the text it always did; one with a person covers the person and session too", () => {
    const [entry] = chain(1)
    const { hash: _, ...stored } = entry!
    const v1 = JSON.stringify(["switchyard-audit-v1", stored.id, stored.at, stored.actor_key_hash, stored.actor_key_name,
      stored.actor_user_id, stored.workspace_id, stored.action, stored.target_type, stored.target_id, stored.before, stored.after,
      stored.ip, stored.request_id, stored.prev_hash])
    assert.strictEqual(AuditChain.canonical(stored), v1)
    assert.strictEqual(AuditChain.canonical({ ...stored, actor_user: null, actor_session_id: null }), v1)
    const person = { ...stored, actor_user: `{"sub":"ada","email":null,"name":null}`, actor_session_id: "s1" }
    assert.notStrictEqual(AuditChain.canonical(person), v1)
    assert.notStrictEqual(AuditChain.canonical(person), AuditChain.canonical({ ...person, actor_session_id: "s2" }))
    assert.notStrictEqual(AuditChain.canonical(person), AuditChain.canonical({ ...person, actor_user: `{"sub":"eve","email":null,"name":null}` }))
  })

  it("an intact chain checks out and ends on its last hash", () => {
    const entries = chain(5)
    assert.deepStrictEqual(AuditChain.check(entries, AuditChain.genesis, sha256), { broken: undefined, last: entries[4]!.hash })
  })

  it("a changed field breaks that entry's own hash; a removed entry breaks the next one's link", () => {
    const entries = chain(5)
    const changed = entries.map((e) => (e.id === 3 ? { ...e, after: `{"name":"forged"}` } : e))
    assert.deepStrictEqual(AuditChain.check(changed, AuditChain.genesis, sha256).broken, { id: 3, reason: "hash_mismatch" })
    const removed = entries.filter((e) => e.id !== 2)
    assert.deepStrictEqual(AuditChain.check(removed, AuditChain.genesis, sha256).broken, { id: 3, reason: "prev_hash_mismatch" })
  })

  it("every stored field is covered by the hash", () => {
    const [entry] = chain(1)
    const base = AuditChain.canonical(entry!)
    for (const [field, value] of Object.entries(entry!).filter(([f]) => f !== "hash")) {
      const other = { ...entry!, [field]: typeof value === "number" ? value + 1 : `${String(value)}x` }
      assert.notStrictEqual(AuditChain.canonical(other), base, field)
    }
  })

  it("redacts secret-named fields at any depth and keeps what only says a secret is set", () => {
    assert.deepStrictEqual(
      AuditChain.redact({ name: "n", key: "sk-1", nested: [{ api_key: "x", token: null }], api_key_env: "ENV", credential: { set: true, last4: "abcd" } }),
      { name: "n", key: "[redacted]", nested: [{ api_key: "[redacted]", token: null }], api_key_env: "ENV", credential: { set: true, last4: "abcd" } }
    )
  })
})
