/**
 * The whole HTTP contract of the gateway, mounted under `/api/v1` (and Cohere's v2 rerank at
 * `/api/v2/rerank`). The server, the client and
 * `/api/v1/openapi.json` are all derived from it.
 *
 * @since 0.1.0
 */
import { HttpApi, OpenApi } from "effect/http-api"
import { EmbeddingsApi } from "./EmbeddingsApi.ts"
import { ByokApi } from "./ByokApi.ts"
import { CohereApi } from "./CohereApi.ts"
import { CreditsApi } from "./CreditsApi.ts"
import { InternsApi } from "./InternsApi.ts"
import { KeysApi } from "./KeysApi.ts"
import { ModelsApi } from "./ModelsApi.ts"
import { SchemaErrors } from "./SchemaErrors.ts"
import { SystemApi } from "./SystemApi.ts"
import * as UnknownFields from "./UnknownFields.ts"
import { ActivityApi } from "./ActivityApi.ts"
import { AuditApi } from "./AuditApi.ts"
import { SessionsApi } from "./SessionsApi.ts"
import { ProviderAdminApi } from "./ProviderAdminApi.ts"
import { BatchesApi } from "./BatchesApi.ts"
import { FilesApi } from "./FilesApi.ts"
import { ProvidersApi } from "./ProvidersApi.ts"
import { RerankApi } from "./RerankApi.ts"
import { WorkspacesApi } from "./WorkspacesApi.ts"

const definition = HttpApi.make("switchyard")
  .add(SystemApi)
  .add(KeysApi)
  .add(InternsApi)
  .add(CreditsApi)
  .add(ByokApi)
  .add(EmbeddingsApi)
  .add(RerankApi)
  .add(ModelsApi)
  .add(WorkspacesApi)
  .add(ActivityApi)
  .add(ProvidersApi)
  .add(ProviderAdminApi)
  .add(AuditApi)
  .add(FilesApi)
  .add(BatchesApi)
  .add(SessionsApi)
  .prefix("/api/v1")
  // Cohere's SDK appends `v2/rerank` to its base URL (`http://host:8080/api`): outside `/api/v1`.
  .add(CohereApi)
  .middleware(SchemaErrors)
  .annotate(HttpApi.ParseOptions, { errors: "all" })

/**
 * @since 0.1.0
 */
export class Api extends definition
  .annotateMerge(OpenApi.annotations({
    title: "Switchyard",
    version: "1.0.0",
    description: "OpenRouter-compatible model-routing gateway",
    // Each request body says what its route does with unknown fields (UnknownFields.ts).
    transform: (spec) => UnknownFields.written(spec, UnknownFields.treatments(definition))
  }))
{}
