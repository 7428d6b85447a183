/**
 * What every self-hosted server's module has in common: the self-hosted fields (replicas,
 * probes, discovery), a base URL its config names, no batch API, no native types, no built-in
 * provider (a platform team lists its own), and the credential field's words.
 *
 * @since 0.13.0
 */
import { SelfHostedFields } from "./Fields.ts"
import { define, none, noDtypes, type ProviderModule, storedHint } from "./ProviderModule.ts"

/**
 * The parts in which one self-hosted server differs from another.
 *
 * @since 0.13.0
 */
export type ServerParts<Id extends string> =
  & Pick<ProviderModule<Id>, "id" | "name" | "rerank" | "inputModalities" | "longInputs" | "counter">
  & { readonly baseUrl: string; readonly start?: NonNullable<ProviderModule["form"]["start"]> | undefined }

/**
 * A self-hosted server's module.
 *
 * @since 0.13.0
 */
export const selfHostedServer = <const Id extends string>(parts: ServerParts<Id>) =>
  define({
    id: parts.id,
    name: parts.name,
    kind: "self-hosted",
    fields: SelfHostedFields.fields,
    needs: [],
    baseUrl: { default: parts.baseUrl, required: true },
    rerank: parts.rerank,
    inputModalities: parts.inputModalities,
    batchApi: none,
    nativeDtypes: noDtypes,
    counter: parts.counter,
    longInputs: parts.longInputs,
    catalog: [],
    form: {
      start: parts.start,
      credentialHint:
        `Optional: the server's API key (TEI's --api-key), sent as a bearer. With "discover": true every model the server lists is served as <slug>/<server id>. ${storedHint}`
    }
  })
