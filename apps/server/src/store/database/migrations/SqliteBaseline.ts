import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { apiKeysColumns, byokCredentialsColumns, creditGrantsColumns, holdsColumns, internsColumns, ledgerColumns } from "./SharedColumns.ts"

/**
 * The SQLite store's schema in one step: the final shape of every table that migrations 0001–0013
 * build on PostgreSQL, with the same names, columns, keys, checks and indexes, in SQLite's types.
 * On SQLite it is migration 0001 and 0002–0013 do nothing; migrations from 0014 on are shared by
 * both dialects.
 *
 * **Details**
 *
 * - Tables are `STRICT`: a value of the wrong type is refused, not stored as whatever it was.
 * - Timestamps are epoch milliseconds (`integer`): the client binds a `Date` as its epoch
 *   milliseconds, and a repository reads a timestamp with `new Date(value)`, which takes
 *   PostgreSQL's `Date` and SQLite's number alike. The defaults (`now_ms`) only back up
 *   statements that leave a time out; the gateway sets its times from the Effect `Clock`.
 * - Booleans are `integer` 0/1 (the client binds `true`/`false` as 1/0).
 * - Money in nanos and counts are `integer` (64-bit); money is read as `CAST(x AS text)` and
 *   parsed to a `bigint`, as on PostgreSQL.
 * - Days (`key_spend`, `workspace_spend`, `ledger_daily`) are `YYYY-MM-DD` text, and the all-time
 *   row's day is the text `-infinity`, which sorts before every date as PostgreSQL's `-infinity`
 *   does, so `day >= '2026-11-01'` and `day = '-infinity'` read the same on both stores.
 * - `api_keys.seq` (an identity column on PostgreSQL) is the table's `INTEGER PRIMARY KEY
 *   AUTOINCREMENT`, and `id` a `UNIQUE` column the foreign keys reference.
 * - `holds.fence` has no sequence on SQLite: `holds_fence` is a one-row counter the money store
 *   takes the next token from (`UPDATE holds_fence SET value = value + 1 RETURNING value`).
 */
const nowMs = "(CAST(unixepoch('subsec') * 1000 AS integer))"
const uuid =
  "(lower(hex(randomblob(4)) || '-' || hex(randomblob(2)) || '-4' || substr(hex(randomblob(2)), 2) || '-' || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(hex(randomblob(2)), 2) || '-' || hex(randomblob(6))))"

/** The statements of the baseline, in order. */
const statements: ReadonlyArray<string> = [
  `CREATE TABLE workspaces (
    id text PRIMARY KEY,
    slug text NOT NULL,
    name text NOT NULL,
    created_at integer NOT NULL DEFAULT ${nowMs},
    description text,
    created_by text,
    default_text_model text,
    default_image_model text,
    default_provider_sort text,
    include_byok_in_budgets integer NOT NULL DEFAULT 0,
    updated_at integer,
    deleted_at integer,
    cache integer
  ) STRICT`,
  `CREATE UNIQUE INDEX workspaces_live_slug ON workspaces (slug) WHERE deleted_at IS NULL`,
  `CREATE TABLE users (
    id text PRIMARY KEY,
    name text NOT NULL,
    default_workspace_id text NOT NULL REFERENCES workspaces(id),
    created_at integer NOT NULL DEFAULT ${nowMs}
  ) STRICT`,
  `CREATE TABLE memberships (
    user_id text NOT NULL REFERENCES users(id),
    workspace_id text NOT NULL REFERENCES workspaces(id),
    role text NOT NULL,
    id text NOT NULL DEFAULT ${uuid},
    created_at integer NOT NULL DEFAULT ${nowMs},
    PRIMARY KEY (user_id, workspace_id)
  ) STRICT`,
  `CREATE INDEX memberships_workspace ON memberships (workspace_id, created_at)`,
  `CREATE TABLE api_keys (
    seq integer PRIMARY KEY AUTOINCREMENT,
    id text NOT NULL UNIQUE,
    ${apiKeysColumns},
    disabled integer NOT NULL DEFAULT 0,
    limit_nanos integer,
    limit_reset text CHECK (limit_reset IN ('daily', 'weekly', 'monthly')),
    include_byok_in_limit integer NOT NULL DEFAULT 0,
    expires_at integer,
    external_user text,
    created_at integer NOT NULL DEFAULT ${nowMs},
    updated_at integer,
    deleted_at integer
  ) STRICT`,
  `CREATE INDEX api_keys_owner ON api_keys (user_id, workspace_id, seq)`,
  `CREATE TABLE ledger (
    ${ledgerColumns},
    cost_nanos integer NOT NULL CHECK (cost_nanos >= 0),
    is_byok integer NOT NULL,
    created_at integer NOT NULL DEFAULT ${nowMs},
    cached_items integer NOT NULL DEFAULT 0 CHECK (cached_items >= 0),
    cached_tokens integer NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0),
    latency_ms integer
  ) STRICT`,
  `CREATE INDEX ledger_key_time ON ledger (key_id, created_at)`,
  `CREATE INDEX ledger_workspace_time ON ledger (workspace_id, created_at)`,
  `CREATE TABLE credit_accounts (
    workspace_id text PRIMARY KEY REFERENCES workspaces(id),
    credits_nanos integer NOT NULL DEFAULT 0 CHECK (credits_nanos >= 0),
    usage_nanos integer NOT NULL DEFAULT 0 CHECK (usage_nanos >= 0),
    updated_at integer,
    prepaid integer NOT NULL DEFAULT 0
  ) STRICT`,
  `CREATE TABLE credit_grants (
    ${creditGrantsColumns},
    amount_nanos integer NOT NULL CHECK (amount_nanos > 0),
    note text,
    granted_by_key_id text REFERENCES api_keys(id),
    created_at integer NOT NULL
  ) STRICT`,
  `CREATE TABLE holds (
    ${holdsColumns},
    amount_nanos integer NOT NULL CHECK (amount_nanos >= 0),
    is_byok integer NOT NULL,
    created_at integer NOT NULL,
    expires_at integer NOT NULL,
    owner text,
    fence integer NOT NULL
  ) STRICT`,
  `CREATE INDEX holds_key ON holds (key_id, expires_at)`,
  `CREATE INDEX holds_workspace ON holds (workspace_id, expires_at)`,
  `CREATE INDEX holds_expiry ON holds (expires_at)`,
  `CREATE INDEX holds_owner ON holds (owner)`,
  `CREATE TABLE holds_fence (
    singleton integer PRIMARY KEY CHECK (singleton = 1),
    value integer NOT NULL
  ) STRICT`,
  `INSERT INTO holds_fence (singleton, value) VALUES (1, 0)`,
  `CREATE TABLE byok_credentials (
    ${byokCredentialsColumns},
    disabled integer NOT NULL DEFAULT 0,
    sort_order integer NOT NULL,
    created_at integer NOT NULL,
    updated_at integer
  ) STRICT`,
  `CREATE INDEX byok_credentials_lookup ON byok_credentials (workspace_id, provider, sort_order)`,
  `CREATE TABLE interns (
    ${internsColumns},
    created_at integer NOT NULL,
    updated_at integer NOT NULL,
    CHECK ((progress_label IS NULL) = (progress_step IS NULL) AND (progress_step IS NULL) = (progress_total IS NULL))
  ) STRICT`,
  `CREATE UNIQUE INDEX interns_creator_name ON interns (workspace_id, creator_user_id, name)`,
  `CREATE INDEX interns_workspace_status ON interns (workspace_id, status, id)`,
  `CREATE TABLE key_spend (
    key_id text NOT NULL REFERENCES api_keys(id),
    day text NOT NULL,
    spent_nanos integer NOT NULL DEFAULT 0 CHECK (spent_nanos >= 0),
    byok_nanos integer NOT NULL DEFAULT 0 CHECK (byok_nanos >= 0),
    PRIMARY KEY (key_id, day)
  ) STRICT, WITHOUT ROWID`,
  `CREATE TABLE gateway_processes (
    id text PRIMARY KEY,
    started_at integer NOT NULL,
    seen_at integer NOT NULL
  ) STRICT`,
  `CREATE TABLE workspace_budgets (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    interval text NOT NULL CHECK (interval IN ('daily', 'weekly', 'monthly', 'lifetime')),
    limit_nanos integer NOT NULL CHECK (limit_nanos >= 0),
    created_at integer NOT NULL,
    updated_at integer NOT NULL,
    UNIQUE (workspace_id, interval)
  ) STRICT`,
  `CREATE TABLE workspace_spend (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    day text NOT NULL,
    spent_nanos integer NOT NULL DEFAULT 0 CHECK (spent_nanos >= 0),
    byok_nanos integer NOT NULL DEFAULT 0 CHECK (byok_nanos >= 0),
    PRIMARY KEY (workspace_id, day)
  ) STRICT, WITHOUT ROWID`,
  `CREATE TABLE ledger_daily (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    day text NOT NULL,
    key_id text NOT NULL REFERENCES api_keys(id),
    model text NOT NULL,
    provider text NOT NULL,
    is_byok integer NOT NULL,
    requests integer NOT NULL CHECK (requests >= 0),
    prompt_tokens integer NOT NULL,
    total_tokens integer NOT NULL,
    cached_items integer NOT NULL,
    cached_tokens integer NOT NULL,
    cost_nanos integer NOT NULL CHECK (cost_nanos >= 0),
    PRIMARY KEY (workspace_id, day, key_id, model, provider, is_byok)
  ) STRICT, WITHOUT ROWID`,
  `CREATE TABLE ledger_pruned (
    singleton integer PRIMARY KEY DEFAULT 1 CHECK (singleton = 1),
    before integer NOT NULL
  ) STRICT`,
  `CREATE TABLE IF NOT EXISTS effect_persistence_embedding_cache (
    id TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires BIGINT
  )`,
  `CREATE INDEX IF NOT EXISTS embedding_cache_expires ON effect_persistence_embedding_cache (expires, id)`
]

export const sqliteBaseline = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const statement of statements) yield* sql.unsafe(statement)
})
