/**
 * The providers page's editor: a provider is written as the config file has it (JSON), and a
 * change is sent as the top-level fields that differ (`PATCH` replaces each field it names). What
 * the add form starts from and says of the credential comes from each adapter's module
 * (core's `adapters/modules/`, the `form` part).
 */
import { storedHint } from "@switchyard/core/adapters/ProviderModule"
import * as Registry from "@switchyard/core/adapters/Registry"

export type ProviderJson = Record<string, unknown>

/** The add form's starting points, by the adapter each is written for, in the registry's order. */
export const templates: ReadonlyArray<{ readonly adapter: string; readonly label: string; readonly provider: ProviderJson }> = Registry
  .modules.flatMap((module) =>
    module.form.start === undefined ? [] : [{ adapter: module.id, label: module.form.start.label, provider: { ...module.form.start.provider } }]
  )

/** What the add form starts from: the first starting point (a provider with one embeddings endpoint, to fill in). */
export const template: ProviderJson = templates[0]!.provider

/** What the add form says of the credential field for a provider of this adapter. */
export const credentialHint = (adapter: unknown): string =>
  typeof adapter === "string" && (Registry.adapterIds as ReadonlyArray<string>).includes(adapter)
    ? Registry.moduleOf(adapter as Registry.AdapterId).form.credentialHint
    : storedHint

export type Parsed =
  | { readonly _tag: "Ok"; readonly value: ProviderJson }
  | { readonly _tag: "Invalid"; readonly message: string }

/** The text as one JSON object, or why not. */
export const parse = (text: string): Parsed => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch (error) {
    return { _tag: "Invalid", message: `The provider is not valid JSON: ${(error as Error).message}` }
  }
  return typeof value === "object" && value !== null && !Array.isArray(value)
    ? { _tag: "Ok", value: value as ProviderJson }
    : { _tag: "Invalid", message: "The provider must be one JSON object, as in the config file" }
}

export type Patch =
  | { readonly _tag: "Patch"; readonly fields: ProviderJson }
  | { readonly _tag: "Invalid"; readonly message: string }

/**
 * The `PATCH` body that turns `stored` into `edited`: every top-level field whose value differs.
 * The slug cannot change, and a field cannot be removed through `PATCH` (it would keep its value).
 */
export const patch = (stored: ProviderJson, edited: ProviderJson): Patch => {
  if (Object.hasOwn(edited, "slug") && edited.slug !== stored.slug) {
    return { _tag: "Invalid", message: "The slug cannot change: add a provider under the new slug instead" }
  }
  const removed = Object.keys(stored).filter((field) => field !== "slug" && !Object.hasOwn(edited, field))
  if (removed.length > 0) {
    return {
      _tag: "Invalid",
      message: `A field cannot be removed here (${removed.join(", ")}): give it another value, or delete the provider and add it again`
    }
  }
  const fields = Object.fromEntries(
    Object.entries(edited).filter(([field, value]) => field !== "slug" && JSON.stringify(value) !== JSON.stringify(stored[field]))
  )
  return { _tag: "Patch", fields }
}

/** The stored credential in words: never more than whether it is set and its last 4 characters. */
export const credential = (apiKey: { readonly set: boolean; readonly last4: string | null } | undefined): string =>
  apiKey === undefined ? "-" : !apiKey.set ? "not set" : apiKey.last4 === null ? "set" : `set, ends in ${apiKey.last4}`
