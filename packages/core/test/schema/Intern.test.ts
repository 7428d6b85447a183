import { assert, describe, it } from "@effect/vitest"
import { Exit, Schema } from "effect"
import * as fc from "fast-check"
import * as InternError from "../../src/errors/InternError.ts"
import { StoreUnavailable } from "../../src/store/StoreUnavailable.ts"
import {
  CreateInternBody,
  InternRecord,
  ListInternsQuery,
  toRecord,
  UpdateInternBody,
  type Intern
} from "../../src/schema/Intern.ts"

const strict = { onExcessProperty: "error", errors: "all" } as const
const decodeUpdate = (u: unknown) => Schema.decodeUnknownExit(UpdateInternBody)(u, strict)
const accepts = (u: unknown) => Exit.isSuccess(decodeUpdate(u))

const intern: Intern = {
  id: "0190b7c4-0000-7000-8000-000000000001",
  workspaceId: "ws-1",
  creatorUserId: "user-1",
  name: "scout",
  description: null,
  instructions: "Be brief.",
  model: null,
  status: "stopped",
  hostname: null,
  progress: null,
  lastFailureMessage: null,
  vaultId: null,
  attachedVaultId: null,
  createdAt: "2025-01-01T00:00:00.000Z",
  updatedAt: "2025-01-02T00:00:00.000Z"
}

describe("UpdateInternBody", () => {
  it("accepts an empty body, omitted fields and nulls that clear", () => {
    assert.isTrue(accepts({}))
    assert.isTrue(accepts({ description: null, instructions: null, model: null }))
    assert.isTrue(accepts({ name: "ab", description: "d", instructions: "i", model: "openai/gpt-4o" }))
  })

  it("holds names to 2..17 characters of the pattern", () => {
    for (const name of ["ab", "a1", "scout-2", "a-b-c", "abcdefghijklmnopq", "x9-y8"]) {
      assert.isTrue(accepts({ name }), name)
    }
    for (const name of ["a", "abcdefghijklmnopqr", "1abc", "Abc", "ab-", "-ab", "a--b", "a_b", "a b", "ab.c", ""]) {
      assert.isFalse(accepts({ name }), name)
    }
    assert.isFalse(accepts({ name: null }))
    assert.isFalse(accepts({ name: 12 }))
  })

  it("accepts exactly the names the pattern and length allow", () => {
    fc.assert(fc.property(fc.string({ unit: fc.constantFrom("a", "b", "0", "-", "Z", "_"), maxLength: 20 }), (name) => {
      const valid = name.length >= 2 && name.length <= 17 && /^[a-z][a-z0-9]*(-[a-z0-9]+)*$/.test(name)
      return accepts({ name }) === valid
    }))
  })

  it("limits description to 2000 characters, counted as code points", () => {
    assert.isTrue(accepts({ description: "x".repeat(2000) }))
    assert.isFalse(accepts({ description: "x".repeat(2001) }))
    assert.isTrue(accepts({ description: "😀".repeat(2000) }))
    assert.isFalse(accepts({ description: "😀".repeat(2001) }))
  })

  it("limits instructions to 100000 characters", () => {
    assert.isTrue(accepts({ instructions: "x".repeat(100_000) }))
    assert.isFalse(accepts({ instructions: "x".repeat(100_001) }))
  })

  it("holds model to 200 characters shaped vendor/model with an optional variant", () => {
    for (const model of ["openai/gpt-4o", "meta-llama/llama-3.1-8b-instruct:free", "01-ai/yi-large", "a/b:c"]) {
      assert.isTrue(accepts({ model }), model)
    }
    for (const model of ["gpt-4o", "openai/", "/gpt", "openai/gpt/4", "openai/gpt-4o:", "openai/gpt 4o", ""]) {
      assert.isFalse(accepts({ model }), model)
    }
    const long = `v/${"m".repeat(198)}`
    assert.isTrue(accepts({ model: long }))
    assert.isFalse(accepts({ model: `${long}m` }))
  })

  it("refuses unknown keys and wrong types", () => {
    assert.isFalse(accepts({ nmae: "scout" }))
    assert.isFalse(accepts({ description: 3 }))
    assert.isFalse(accepts([]))
    assert.isFalse(accepts(null))
  })

  it("reports every broken rule at once", () => {
    const exit = decodeUpdate({ name: "A", model: "nope" })
    assert.isTrue(Exit.isFailure(exit))
    const text = String(Exit.isFailure(exit) ? exit.cause : "")
    assert.include(text, "name")
    assert.include(text, "model")
  })
})

describe("CreateInternBody", () => {
  it("needs a valid name and takes the SDK's fields", () => {
    const decode = (u: unknown) => Schema.decodeUnknownExit(CreateInternBody)(u, strict)
    assert.isTrue(Exit.isSuccess(decode({ name: "scout", provision: false, vault_id: "v", workspace_id: "w" })))
    assert.isFalse(Exit.isSuccess(decode({})))
    assert.isFalse(Exit.isSuccess(decode({ name: "Scout" })))
  })
})

describe("InternRecord", () => {
  it("carries every key, nullable ones as null, and both spellings of the four doubled keys", () => {
    const record = Schema.encodeSync(InternRecord)(toRecord(intern))
    assert.deepStrictEqual(Object.keys(record).sort(), [
      "attached_vault_id", "createdAt", "created_at", "description", "hostname", "id", "instructions",
      "lastFailureMessage", "last_failure_message", "model", "name", "progress", "status", "updatedAt",
      "updated_at", "vault_id", "workspaceId", "workspace_id"
    ])
    assert.strictEqual(record.workspaceId, record.workspace_id)
    assert.strictEqual(record.createdAt, record.created_at)
    assert.strictEqual(record.updatedAt, record.updated_at)
    assert.strictEqual(record.lastFailureMessage, record.last_failure_message)
    assert.isNull(record.description)
    assert.isNull(record.progress)
  })
})

describe("ListInternsQuery", () => {
  const Query = Schema.toCodecArrayFromSingle(Schema.Struct(ListInternsQuery))
  const decode = (u: unknown) => Schema.decodeUnknownExit(Query)(u)

  it("splits comma-separated and repeated statuses", () => {
    const one = decode({ status: "running,stopped" })
    const many = decode({ status: ["running", "failed"] })
    assert.deepStrictEqual(Exit.isSuccess(one) ? one.value.status : undefined, ["running", "stopped"])
    assert.deepStrictEqual(Exit.isSuccess(many) ? many.value.status : undefined, ["running", "failed"])
  })

  it("refuses unknown statuses and limits outside 1..100", () => {
    assert.isTrue(Exit.isFailure(decode({ status: "sleeping" })))
    for (const limit of ["0", "101", "-1", "1.5", "x"]) assert.isTrue(Exit.isFailure(decode({ limit })), limit)
    const ok = decode({ limit: "100" })
    assert.strictEqual(Exit.isSuccess(ok) ? ok.value.limit : undefined, 100)
  })
})

describe("InternError", () => {
  const roundTrip = <E extends InternError.InternError>(schema: Schema.Codec<E, unknown>, error: E) => {
    const encoded = Schema.encodeSync(schema)(error)
    return { encoded, decoded: Schema.decodeUnknownSync(schema)(encoded) }
  }

  it("encodes each fact as the string-code envelope and decodes it back", () => {
    const busy = roundTrip(
      InternError.wire.InternBusy,
      new InternError.InternBusy({ message: "provisioning", metadata: { reason: "provisioning", retryable: true } })
    )
    assert.deepStrictEqual(busy.encoded, {
      error: { code: "intern_busy", message: "provisioning", metadata: { reason: "provisioning", retryable: true } }
    })
    assert.strictEqual(busy.decoded._tag, "InternBusy")
    const missing = roundTrip(InternError.wire.InternNotFound, new InternError.InternNotFound({ message: "no" }))
    assert.deepStrictEqual(missing.encoded, { error: { code: "not_found", message: "no" } })
  })

  it("keeps the two 403 facts apart by metadata.reason", () => {
    const regional = roundTrip(InternError.wire.RegionalHostRefused, new InternError.RegionalHostRefused({ message: "r" }))
    assert.deepStrictEqual(regional.encoded, {
      error: { code: 403, message: "r", metadata: { reason: "regional_host", retryable: false } }
    })
    assert.throws(() => Schema.decodeUnknownSync(InternError.wire.ForeignWorkspace)(regional.encoded))
  })

  it("has a code and a status for every fact, and only the spec's or SDK-typed statuses", () => {
    // The SDK's typed statuses, plus the spec's 503 for a temporary outage (the store's).
    const typed = new Set([400, 401, 403, 404, 408, 409, 413, 415, 500, 502, 503])
    for (const [tag, { status }] of Object.entries(InternError.codes)) {
      assert.isTrue(typed.has(status), tag)
      assert.isDefined(InternError.wire[tag as keyof typeof InternError.wire], tag)
    }
    assert.strictEqual(InternError.codes.PayloadTooLarge.status, 413)
    assert.deepStrictEqual(
      InternError.toEnvelope(new InternError.UpstreamUnavailable({ message: "down", metadata: { reason: "runtime_unreachable", retryable: true } })),
      { error: { code: "upstream_unavailable", message: "down", metadata: { reason: "runtime_unreachable", retryable: true } } }
    )
    assert.deepStrictEqual(
      InternError.toEnvelope(InternError.storeToInternError(new StoreUnavailable({ operation: "interns.find", cause: new Error("reset") }))),
      {
        error: {
          code: 503,
          message: "The gateway's store is unavailable; try again shortly",
          metadata: { reason: "store_unavailable", retryable: true }
        }
      },
      "the store's failure is retryable and names neither the operation nor its cause"
    )
  })
})
