/**
 * Every environment variable the gateway reads, in one list. The configuration guide
 * (`docs/configuration.md`) and the Kubernetes manifests (`deploy/kubernetes/`, each variable set
 * there or named in `docs/kubernetes.md` as the operator's) are checked against it, and it against
 * the reads in the code (`test/deploy/Settings.test.ts`), so a new setting cannot be left out of
 * either.
 *
 * **Details**
 *
 * - The gateway's own settings are listed by name here; the built-in providers' key variables,
 *   the variables that place the built-in cloud providers and those that say a cloud identity is
 *   at hand come from the catalog that reads them (`@switchyard/core`), so a new built-in provider
 *   adds its key here by itself.
 * - A config file's providers name variables of the operator's choosing (`api_key_env`); those
 *   are the operator's and are not listed.
 * - `secret`: a credential, or a URL or header that may carry one. A manifest gives it from a
 *   secret store (a Kubernetes Secret), never as a value.
 */
import { builtin, placementVariables } from "@switchyard/core/catalog/BuiltinCatalog"
import { awsCredentialEnv, identityVariables } from "@switchyard/core/catalog/Catalog"

export interface Setting {
  readonly name: string
  readonly secret: boolean
  /**
   * Who reads it: the gateway's code, or the default credential chain of a cloud library the
   * gateway hands its calls to (`@azure/identity`, the AWS SDK's, `google-auth-library`).
   */
  readonly readBy: "gateway" | "cloud library"
}

const plain = (name: string): Setting => ({ name, secret: false, readBy: "gateway" })
const secret = (name: string): Setting => ({ name, secret: true, readBy: "gateway" })

/** The gateway's own settings, in the order of the configuration guide's table. */
const gateway: ReadonlyArray<Setting> = [
  plain("SWITCHYARD_HOST"),
  plain("SWITCHYARD_PORT"),
  plain("SWITCHYARD_DATA_DIR"),
  plain("SWITCHYARD_SQLITE_SYNCHRONOUS"),
  // A URL whose user part may carry a password.
  secret("DATABASE_URL"),
  secret("REDIS_URL"),
  plain("SWITCHYARD_CONFIG"),
  secret("SWITCHYARD_BOOTSTRAP_MANAGEMENT_KEY"),
  secret("SWITCHYARD_BOOTSTRAP_API_KEY"),
  plain("SWITCHYARD_REGIONAL_HOSTS"),
  plain("SWITCHYARD_TRUST_PROXY"),
  plain("SWITCHYARD_INTERN_REQUEST_TIMEOUT_MS"),
  plain("SWITCHYARD_MAX_BODY_BYTES"),
  plain("SWITCHYARD_MAX_INPUTS"),
  plain("SWITCHYARD_MEMORY_BUDGET_MB"),
  plain("SWITCHYARD_MEMORY_SHARE_PERCENT"),
  plain("SWITCHYARD_BATCH_CONCURRENCY"),
  plain("SWITCHYARD_BODY_TIMEOUT_MS"),
  plain("SWITCHYARD_DRAIN_GRACE_MS"),
  plain("SWITCHYARD_CONSOLE_DIR"),
  plain("SWITCHYARD_PUBLIC_URL"),
  plain("SWITCHYARD_LEASE_IDLE_MS"),
  plain("SWITCHYARD_WORKERS"),
  plain("SWITCHYARD_RATE_LIMIT"),
  secret("SWITCHYARD_SECRET_KEY"),
  plain("SWITCHYARD_REQUEST_TIMEOUT_MS"),
  plain("SWITCHYARD_ATTEMPT_TIMEOUT_MS"),
  plain("SWITCHYARD_CACHE_TTL_SECONDS"),
  plain("SWITCHYARD_CACHE_MAX_ENTRIES"),
  plain("SWITCHYARD_LEDGER_RETENTION_DAYS"),
  plain("SWITCHYARD_BATCH_RETENTION"),
  plain("SWITCHYARD_BATCH_WORKERS"),
  plain("SWITCHYARD_BATCH_LINE_CONCURRENCY"),
  plain("SWITCHYARD_BATCH_UNIT_LINES"),
  plain("SWITCHYARD_BATCH_POLL_MS"),
  plain("SWITCHYARD_BATCH_LEASE_MS"),
  plain("SWITCHYARD_PROVIDER_BATCH_POLL_MS"),
  plain("SWITCHYARD_CACHE_MEMORY_BYTES"),
  plain("SWITCHYARD_CACHE_MEMORY_ENTRIES"),
  plain("SWITCHYARD_INTERN_RUNTIME"),
  plain("SWITCHYARD_INTERN_ORCHESTRATOR_URL"),
  plain("SWITCHYARD_INTERN_ORCHESTRATOR_TIMEOUT_MS"),
  plain("SWITCHYARD_INTERN_ORCHESTRATOR_POLL_MS"),
  plain("SWITCHYARD_INTERN_STEP_DELAY_MS"),
  plain("SWITCHYARD_LOG_FORMAT"),
  plain("SWITCHYARD_LOG_LEVEL"),
  secret("SWITCHYARD_METRICS_TOKEN"),
  plain("SWITCHYARD_AUDIT_VERIFY_S"),
  plain("OTEL_SDK_DISABLED"),
  plain("OTEL_EXPORTER_OTLP_ENDPOINT"),
  plain("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"),
  plain("OTEL_EXPORTER_OTLP_PROTOCOL"),
  plain("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
  // Headers such as `authorization=Bearer ...` for the collector.
  secret("OTEL_EXPORTER_OTLP_HEADERS"),
  secret("OTEL_EXPORTER_OTLP_TRACES_HEADERS"),
  plain("OTEL_SERVICE_NAME"),
  plain("OTEL_BSP_SCHEDULE_DELAY")
]

/** The built-in providers' key variables (`OPENAI_API_KEY`, ...), from the built-in catalog. */
export const providerKeys: ReadonlyArray<string> = [
  ...new Set(builtin.providers.flatMap((p) => (typeof p.api_key_env === "string" ? [p.api_key_env] : [])))
]

/** The variables the AWS default credential chain reads that are credentials themselves. */
const awsSecrets = new Set(["AWS_ACCESS_KEY_ID"])

/** Read by the cloud libraries' default credential chains only, beside the ones the catalog reads. */
const cloudLibrary: ReadonlyArray<Setting> = [
  { name: "AZURE_TENANT_ID", secret: false, readBy: "cloud library" },
  { name: "AZURE_CLIENT_SECRET", secret: true, readBy: "cloud library" },
  { name: "AZURE_FEDERATED_TOKEN_FILE", secret: false, readBy: "cloud library" },
  { name: "IDENTITY_HEADER", secret: true, readBy: "cloud library" },
  { name: "AWS_SECRET_ACCESS_KEY", secret: true, readBy: "cloud library" },
  { name: "AWS_SESSION_TOKEN", secret: true, readBy: "cloud library" }
]

/** Every setting, each once. */
export const all: ReadonlyArray<Setting> = [
  ...gateway,
  ...providerKeys.map(secret),
  ...placementVariables.map(plain),
  ...identityVariables.map(plain),
  ...awsCredentialEnv.map((name) => (awsSecrets.has(name) ? secret(name) : plain(name))),
  ...cloudLibrary
]

/**
 * Read by the gateway but set by itself, never by an operator: the primary numbers the workers
 * it forks (`SWITCHYARD_WORKERS`, Workers.ts).
 */
export const internal: ReadonlyArray<string> = ["SWITCHYARD_WORKER_INDEX"]
