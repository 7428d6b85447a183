/**
 * The JSON Schema of the config file (`SWITCHYARD_CONFIG`), generated from the {@link Catalog}
 * schema that decodes it, so editors can complete and check a config file.
 *
 * **Details**
 *
 * The repository commits the document as `docs/switchyard.schema.json`; `pnpm config-schema`
 * writes it again from this module, and a test fails when the committed file differs. A JSON
 * config file may name it in its `$schema` key; a YAML one with a
 * `# yaml-language-server: $schema=...` comment.
 *
 * **Gotchas**
 *
 * The document is a preliminary check: rules the schema expresses as filters (unique provider
 * slugs, the fields an adapter's module needs, such as a `base_url` where it has no default host
 * of its own and a `region` for `bedrock`, unique endpoints) are the decoder's alone.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Catalog } from "./Catalog.ts"

/**
 * Where the document is committed, relative to the repository root.
 *
 * @since 0.1.0
 */
export const path = "docs/switchyard.schema.json"

/**
 * The JSON Schema (draft 2020-12) of the config file.
 *
 * @since 0.1.0
 */
export const document = (): Record<string, unknown> => {
  const generated = Schema.toJsonSchemaDocument(Catalog, { onExcessProperty: "error" })
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    title: "Switchyard config file",
    description: "Providers, their endpoints, workspace settings and broadcast destinations. Reference: docs/configuration.md",
    ...generated.schema,
    ...(Object.keys(generated.definitions).length > 0 ? { $defs: generated.definitions } : {})
  }
}

/**
 * The document as committed: two-space JSON with a final newline.
 *
 * @since 0.1.0
 */
export const text = (): string => `${JSON.stringify(document(), null, 2)}\n`
