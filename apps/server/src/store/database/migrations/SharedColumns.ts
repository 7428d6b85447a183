/**
 * Column definitions written alike on PostgreSQL and SQLite: a PostgreSQL migration and the SQLite
 * baseline (SqliteBaseline.ts) that builds the same table take them from here, so that the two
 * cannot drift apart. Only columns whose types the two dialects spell the same way belong here.
 */

/** `interns`: the intern, its settings, its lifecycle state and its current run (before its times). */
export const internsColumns = `id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    creator_user_id text NOT NULL REFERENCES users(id),
    name text NOT NULL,
    description text,
    instructions text,
    model text,
    status text NOT NULL CHECK (status IN ('awaiting_slack_install', 'queued', 'provisioning', 'running',
      'failed', 'stopped', 'destroying', 'destroy_failed')),
    hostname text,
    progress_label text,
    progress_step integer,
    progress_total integer,
    last_failure_message text,
    vault_id text UNIQUE,
    attached_vault_id text,
    run_id text`

/** `ledger`: a generation's key, workspace, model, provider and tokens (before its cost). */
export const ledgerColumns = `generation_id text PRIMARY KEY,
    key_id text NOT NULL REFERENCES api_keys(id),
    workspace_id text NOT NULL REFERENCES workspaces(id),
    model text NOT NULL,
    provider text NOT NULL,
    prompt_tokens integer NOT NULL,
    total_tokens integer NOT NULL`

/** `api_keys`: a key's hash, kind, names and owner (after its ids, which the dialects number apart). */
export const apiKeysColumns = `hash text NOT NULL UNIQUE,
    kind text NOT NULL CHECK (kind IN ('standard', 'management')),
    name text NOT NULL,
    label text NOT NULL,
    user_id text NOT NULL REFERENCES users(id),
    workspace_id text NOT NULL REFERENCES workspaces(id)`

/** `holds`: a hold's id and whose it is (before its amount). */
export const holdsColumns = `id text PRIMARY KEY,
    key_id text NOT NULL REFERENCES api_keys(id),
    workspace_id text NOT NULL REFERENCES workspaces(id)`

/** `credit_grants`: a grant's id and workspace (before its amount). */
export const creditGrantsColumns = `id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id)`

/** `byok_credentials`: a workspace's credential for a provider, its names and its sealed secret. */
export const byokCredentialsColumns = `id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    provider text NOT NULL,
    name text,
    label text NOT NULL,
    secret text NOT NULL`
