/**
 * Ollama: `POST /api/embed`, listed by `GET /api/tags`, probed at `GET /api/version`. Wire format:
 * `apps/server/src/providers/Ollama.ts`.
 *
 * @since 0.13.0
 */
import { SelfHostedFields } from "../Fields.ts"
import { define, long, none, noDtypes, storedHint } from "../ProviderModule.ts"

const id = "ollama"

/**
 * @since 0.13.0
 */
export const ollama = define({
  id,
  name: "Ollama",
  kind: "self-hosted",
  fields: SelfHostedFields.fields,
  needs: [],
  baseUrl: { default: "http://127.0.0.1:11434", required: true },
  rerank: "none",
  inputModalities: ["text"],
  batchApi: none,
  nativeDtypes: noDtypes,
  longInputs: () => long.end,
  catalog: [],
  form: {
    credentialHint: `Optional: the server's API key (TEI's --api-key), sent as a bearer. With "discover": true every model the server lists is served as <slug>/<server id>. ${storedHint}`
  }
})
