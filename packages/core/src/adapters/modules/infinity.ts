/**
 * Infinity: OpenAI-compatible `POST /embeddings` and Jina-shaped `/rerank`, listed by
 * `GET /models`, probed at `GET /health`. Wire format: `apps/server/src/providers/Infinity.ts` over
 * `OpenAiServer.ts`.
 *
 * @since 0.13.0
 */
import { SelfHostedFields } from "../Fields.ts"
import { define, long, none, noDtypes, storedHint } from "../ProviderModule.ts"

const id = "infinity"

/**
 * @since 0.13.0
 */
export const infinity = define({
  id,
  name: "Infinity",
  kind: "self-hosted",
  fields: SelfHostedFields.fields,
  needs: [],
  baseUrl: { default: "http://127.0.0.1:7997", required: true },
  rerank: "text",
  inputModalities: ["text"],
  batchApi: none,
  nativeDtypes: noDtypes,
  longInputs: () => long.silent,
  catalog: [],
  form: {
    credentialHint: `Optional: the server's API key (TEI's --api-key), sent as a bearer. With "discover": true every model the server lists is served as <slug>/<server id>. ${storedHint}`
  }
})
