/**
 * vLLM: OpenAI-compatible `POST /v1/embeddings` (token ids too) and `/v1/rerank`, listed by
 * `GET /v1/models`, probed at `GET /health`. Wire format: `apps/server/src/providers/Vllm.ts` over
 * `OpenAiServer.ts`.
 *
 * @since 0.13.0
 */
import { SelfHostedFields } from "../Fields.ts"
import { define, long, none, noDtypes, storedHint } from "../ProviderModule.ts"

const id = "vllm"

/**
 * @since 0.13.0
 */
export const vllm = define({
  id,
  name: "vLLM",
  kind: "self-hosted",
  fields: SelfHostedFields.fields,
  needs: [],
  baseUrl: { default: "http://127.0.0.1:8000", required: true },
  rerank: "text",
  inputModalities: ["text", "tokens"],
  batchApi: none,
  nativeDtypes: noDtypes,
  longInputs: () => long.none,
  catalog: [],
  form: {
    credentialHint: `Optional: the server's API key (TEI's --api-key), sent as a bearer. With "discover": true every model the server lists is served as <slug>/<server id>. ${storedHint}`
  }
})
