import { assert, describe, it } from "vitest"
import * as Catalog from "@switchyard/core/catalog/Catalog"
import { Schema } from "effect"
import * as ProviderDraft from "../src/ProviderDraft.ts"

describe("ProviderDraft", () => {
  it("reads one JSON object, and says what is wrong with anything else", () => {
    assert.deepStrictEqual(ProviderDraft.parse('{"slug":"acme"}'), { _tag: "Ok", value: { slug: "acme" } })
    const broken = ProviderDraft.parse("{slug: acme}")
    assert.strictEqual(broken._tag, "Invalid")
    assert.match(broken._tag === "Invalid" ? broken.message : "", /^The provider is not valid JSON: /)
    assert.deepStrictEqual(ProviderDraft.parse("[1]"), { _tag: "Invalid", message: "The provider must be one JSON object, as in the config file" })
    assert.strictEqual(ProviderDraft.parse("null")._tag, "Invalid")
  })

  it("patches the top-level fields that differ, never the slug", () => {
    const stored = { slug: "acme", name: "Acme", endpoints: [{ model: "a/b", pricing: { prompt: "1" } }], zdr: false }
    assert.deepStrictEqual(ProviderDraft.patch(stored, { ...stored }), { _tag: "Patch", fields: {} })
    assert.deepStrictEqual(
      ProviderDraft.patch(stored, { name: "Acme Cloud", endpoints: [{ model: "a/b", pricing: { prompt: "2" } }], zdr: false }),
      { _tag: "Patch", fields: { name: "Acme Cloud", endpoints: [{ model: "a/b", pricing: { prompt: "2" } }] } }
    )
    assert.deepStrictEqual(ProviderDraft.patch(stored, { ...stored, status_page_url: "https://status.acme.test" }), {
      _tag: "Patch",
      fields: { status_page_url: "https://status.acme.test" }
    })
  })

  it("refuses a new slug and a removed field, which a PATCH cannot express", () => {
    const stored = { slug: "acme", name: "Acme", zdr: false }
    assert.strictEqual(ProviderDraft.patch(stored, { ...stored, slug: "other" })._tag, "Invalid")
    const removed = ProviderDraft.patch(stored, { slug: "acme", name: "Acme" })
    assert.strictEqual(removed._tag, "Invalid")
    assert.include(removed._tag === "Invalid" ? removed.message : "", "(zdr)")
  })

  it("shows of a credential whether it is set and its last 4 characters only", () => {
    assert.strictEqual(ProviderDraft.credential({ set: true, last4: "1234" }), "set, ends in 1234")
    assert.strictEqual(ProviderDraft.credential({ set: true, last4: null }), "set")
    assert.strictEqual(ProviderDraft.credential({ set: false, last4: null }), "not set")
    assert.strictEqual(ProviderDraft.credential(undefined), "-")
  })

  it("starts the add form from a template per adapter, each a provider the config file's schema takes once named", () => {
    for (const { adapter, provider } of ProviderDraft.templates) {
      assert.strictEqual(provider.adapter, adapter)
      const named = { ...provider, slug: `new-${adapter}`, name: "New" }
      assert.doesNotThrow(() => Schema.decodeUnknownSync(Catalog.Provider)(named, { onExcessProperty: "error" }), adapter)
    }
    const bedrock = ProviderDraft.templates.find((t) => t.adapter === "bedrock")!.provider
    assert.strictEqual(bedrock.region, "us-east-1")
    assert.include(ProviderDraft.credentialHint("bedrock"), "AWS credentials")
    assert.notInclude(ProviderDraft.credentialHint("openai"), "AWS")
    assert.sameMembers(ProviderDraft.templates.map((t) => t.adapter), ["openai", "azure", "bedrock", "vertex", "tei"])
    const tei = ProviderDraft.templates.find((t) => t.adapter === "tei")!.provider
    assert.strictEqual(tei.discover, true)
    assert.include(ProviderDraft.credentialHint("ollama"), "discover")
    const azure = ProviderDraft.templates.find((t) => t.adapter === "azure")!.provider
    assert.strictEqual(azure.api_version, "2024-10-21")
    assert.include(ProviderDraft.credentialHint("azure"), "api-key")
    assert.include(ProviderDraft.credentialHint("azure"), "entra")
    const vertex = ProviderDraft.templates.find((t) => t.adapter === "vertex")!.provider
    assert.deepStrictEqual([vertex.project, vertex.location], ["my-project", "us-central1"])
    assert.include(ProviderDraft.credentialHint("vertex"), "credentials_file")
  })
})
