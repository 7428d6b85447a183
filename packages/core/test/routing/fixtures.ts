import { Schema } from "effect"
import * as fc from "fast-check"
import { Catalog } from "../../src/catalog/Catalog.ts"
import type { Candidate } from "../../src/routing/Candidates.ts"
import { endpointId } from "../../src/routing/Candidates.ts"

export const model = "acme/embed-1"

export interface Spec {
  readonly slug: string
  readonly prompt?: string
  readonly request?: string
  readonly image?: string
  readonly audio?: string
  readonly variant?: string
  readonly quantization?: string
  readonly data_collection?: "allow" | "deny"
  readonly zdr?: boolean
  readonly distillable?: boolean
  readonly supported_parameters?: ReadonlyArray<string>
  readonly input_modalities?: ReadonlyArray<string>
  readonly model?: string
  readonly matryoshka?: true | ReadonlyArray<number>
}

export const catalogOf = (specs: ReadonlyArray<Spec>): Catalog => {
  const bySlug = new Map<string, Array<Spec>>()
  for (const s of specs) bySlug.set(s.slug, [...(bySlug.get(s.slug) ?? []), s])
  return Schema.decodeUnknownSync(Catalog)({
    providers: [...bySlug.entries()].map(([slug, endpoints]) => ({
      slug,
      name: slug,
      adapter: "openai",
      base_url: `https://${slug}.example/v1`,
      api_key_env: `${slug.toUpperCase().replace(/-/g, "_")}_KEY`,
      data_collection: endpoints[0]!.data_collection ?? "allow",
      zdr: endpoints[0]!.zdr ?? false,
      endpoints: endpoints.map((s) => ({
        model: s.model ?? model,
        upstream_model: "m",
        variant: s.variant ?? "default",
        pricing: { prompt: s.prompt ?? "1", request: s.request ?? "0", image: s.image ?? "0", audio: s.audio ?? "0" },
        quantization: s.quantization ?? "unknown",
        dimensions: 8,
        supported_parameters: s.supported_parameters ?? [],
        max_batch_items: 16,
        distillable: s.distillable ?? false,
        input_modalities: s.input_modalities ?? ["text"],
        ...(s.matryoshka !== undefined ? { matryoshka: s.matryoshka } : {})
      }))
    }))
  })
}

export const candidatesOf = (catalog: Catalog): ReadonlyArray<Candidate> =>
  catalog.providers.flatMap((provider) =>
    provider.endpoints.map((endpoint) => ({ id: endpointId(provider, endpoint), provider, endpoint }))
  )

export const slugs = ["alpha", "beta", "gamma", "delta", "epsilon"] as const

const price = fc.constantFrom("0", "0.01", "0.02", "0.05", "0.1", "0.13", "1")
const quantization = fc.constantFrom("fp8", "fp16", "bf16", "fp32", "int8", "unknown")

const spec: fc.Arbitrary<Spec> = fc.record({
  slug: fc.constantFrom(...slugs),
  prompt: price,
  request: fc.constantFrom("0", "0.001"),
  image: fc.constantFrom("0", "0.0001"),
  audio: fc.constantFrom("0", "0.002"),
  variant: fc.constantFrom("default", "turbo"),
  quantization,
  data_collection: fc.constantFrom("allow" as const, "deny" as const),
  zdr: fc.boolean(),
  distillable: fc.boolean(),
  supported_parameters: fc.subarray(["dimensions", "encoding_format", "input_type", "user"]),
  input_modalities: fc.subarray(["text", "tokens", "image"], { minLength: 1 })
})

// One provider has a single data_collection / zdr, so later specs of a slug inherit the first's.
export const specs = fc.uniqueArray(spec, {
  minLength: 1,
  maxLength: 8,
  selector: (s) => `${s.slug}/${s.variant}`
})
