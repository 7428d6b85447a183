/**
 * The names the public API and its SDK (`@openrouter/sdk`'s `ProviderName`) give the providers
 * of the built-in catalog, so that `order`, `only` and `ignore` written for OpenRouter
 * (`["OpenAI", "Together"]`) name the same providers here.
 *
 * **Details**
 *
 * Keyed by provider slug; a config-file provider that keeps a built-in slug keeps its names.
 * Matching ignores case and surrounding spaces (see `Candidates.matchesSlug`), and every
 * provider also answers to its own slug and its configured `name`.
 *
 * @since 0.1.0
 */

/**
 * @since 0.1.0
 */
const publicNames: Readonly<Record<string, ReadonlyArray<string>>> = {
  openai: ["OpenAI"],
  cohere: ["Cohere"],
  voyage: ["VoyageAI by MongoDB", "Voyage AI", "Voyage"],
  mistral: ["Mistral"],
  "google-ai-studio": ["Google AI Studio"],
  jina: ["Jina AI", "Jina"],
  together: ["Together", "Together AI"],
  fireworks: ["Fireworks"],
  deepinfra: ["DeepInfra"]
}

const normalise = (name: string) => name.trim().toLowerCase()

const lookup = new Map(
  Object.entries(publicNames).map(([slug, names]) => [slug, new Set(names.map(normalise))])
)

/**
 * Whether `wanted` (already trimmed and lower-cased) names the provider: its slug, its
 * configured name, or one of its public names.
 *
 * @since 0.1.0
 */
export const names = (wanted: string, provider: { readonly slug: string; readonly name: string }): boolean =>
  wanted === provider.slug || wanted === normalise(provider.name) || lookup.get(provider.slug)?.has(wanted) === true
