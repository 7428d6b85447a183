import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Single sign-on: the people an identity provider signed in (`sso_people`, one gateway user each)
 * and their sessions. A session is found by the SHA-256 of its cookie's value (the value itself is
 * never stored); its refresh token is sealed with the store's credential key. A sign-in under
 * way keeps its state (hashed), nonce and sealed PKCE verifier until its callback uses them. Times are epoch
 * milliseconds on both stores.
 */
export const sessions = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const int = sql.onDialectOrElse({ pg: () => "bigint", orElse: () => "integer" })
  yield* sql.unsafe(`CREATE TABLE sso_people (
    sub text PRIMARY KEY,
    user_id text NOT NULL UNIQUE REFERENCES users(id),
    email text,
    name text,
    created_at ${int} NOT NULL
  )`)
  yield* sql.unsafe(`CREATE TABLE sso_sessions (
    id text PRIMARY KEY,
    token_hash text NOT NULL UNIQUE,
    user_id text NOT NULL REFERENCES users(id),
    sub text NOT NULL,
    email text,
    name text,
    csrf_token text NOT NULL,
    role text,
    workspaces_json text NOT NULL,
    home_workspace_id text,
    refresh_token text,
    created_at ${int} NOT NULL,
    last_seen_at ${int} NOT NULL,
    expires_at ${int} NOT NULL,
    roles_checked_at ${int} NOT NULL,
    ended_at ${int}
  )`)
  // A sign-in under way: its state (hashed), nonce and PKCE verifier (sealed), used once.
  yield* sql.unsafe(`CREATE TABLE sso_sign_ins (
    state_hash text PRIMARY KEY,
    nonce text NOT NULL,
    verifier text NOT NULL,
    created_at ${int} NOT NULL
  )`)
  yield* sql.unsafe(`CREATE INDEX sso_sessions_user ON sso_sessions (user_id, created_at)`)
})
