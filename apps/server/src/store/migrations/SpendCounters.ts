import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Per-key spend counters and the functions that reserve and settle in one statement each.
 *
 * **Details**
 *
 * `key_spend` holds, per key and UTC day, the non-BYOK and the BYOK nanos the ledger charged
 * that day; the row dated `-infinity` holds the key's all-time totals. A limit window is then a
 * sum over at most 31 day rows (or the one total row for a key without a reset), whatever the
 * size of the ledger, and changing a key's `limit_reset` needs no recomputation. The counters
 * are written by `switchyard_settle` in the same statement as the ledger row, and backfilled
 * here from the ledger rows written before.
 *
 * `switchyard_reserve` and `switchyard_settle` take the key's row lock first and the workspace's
 * credit account second (the order every writer follows, so processes sharing one PostgreSQL do
 * not deadlock), and return an outcome that the repository turns into errors and messages.
 */
export const spendCounters = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE key_spend (
    key_id text NOT NULL REFERENCES api_keys(id),
    day date NOT NULL,
    spent_nanos bigint NOT NULL DEFAULT 0 CHECK (spent_nanos >= 0),
    byok_nanos bigint NOT NULL DEFAULT 0 CHECK (byok_nanos >= 0),
    PRIMARY KEY (key_id, day)
  )`
  yield* sql`INSERT INTO key_spend (key_id, day, spent_nanos, byok_nanos)
    SELECT key_id, (created_at AT TIME ZONE 'UTC')::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1, 2
    UNION ALL
    SELECT key_id, '-infinity'::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1`
  yield* sql`ALTER TABLE holds ADD COLUMN owner text`
  yield* sql`CREATE INDEX holds_owner ON holds (owner)`
  yield* sql`CREATE TABLE gateway_processes (
    id text PRIMARY KEY,
    started_at timestamptz NOT NULL,
    seen_at timestamptz NOT NULL
  )`
  yield* sql.unsafe(`CREATE FUNCTION switchyard_key_room(p_key text, p_limit bigint, p_reset text, p_include_byok boolean,
      p_now timestamptz, p_exclude_hold text) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_spent bigint;
      v_held bigint;
    BEGIN
      IF p_reset IS NULL THEN
        SELECT COALESCE(SUM(s.spent_nanos + CASE WHEN p_include_byok THEN s.byok_nanos ELSE 0 END), 0) INTO v_spent
          FROM key_spend s WHERE s.key_id = p_key AND s.day = '-infinity'::date;
      ELSE
        SELECT COALESCE(SUM(s.spent_nanos + CASE WHEN p_include_byok THEN s.byok_nanos ELSE 0 END), 0) INTO v_spent
          FROM key_spend s WHERE s.key_id = p_key AND s.day >= CASE p_reset
            WHEN 'daily' THEN (p_now AT TIME ZONE 'UTC')::date
            WHEN 'weekly' THEN date_trunc('week', p_now AT TIME ZONE 'UTC')::date
            ELSE date_trunc('month', p_now AT TIME ZONE 'UTC')::date END;
      END IF;
      SELECT COALESCE(SUM(h.amount_nanos), 0) INTO v_held FROM holds h
        WHERE h.key_id = p_key AND h.expires_at > p_now AND (NOT h.is_byok OR p_include_byok) AND h.id <> p_exclude_hold;
      RETURN p_limit - v_spent - v_held;
    END $$`)
  yield* sql.unsafe(`CREATE FUNCTION switchyard_balance_room(p_workspace text, p_now timestamptz, p_exclude_hold text)
      RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_account record;
      v_held bigint;
    BEGIN
      SELECT credits_nanos, usage_nanos INTO v_account FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO credit_accounts (workspace_id) VALUES (p_workspace) ON CONFLICT (workspace_id) DO NOTHING;
        SELECT credits_nanos, usage_nanos INTO v_account FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE;
      END IF;
      SELECT COALESCE(SUM(h.amount_nanos), 0) INTO v_held FROM holds h
        WHERE h.workspace_id = p_workspace AND h.expires_at > p_now AND NOT h.is_byok AND h.id <> p_exclude_hold;
      RETURN v_account.credits_nanos - v_account.usage_nanos - v_held;
    END $$`)
  yield* sql.unsafe(`CREATE FUNCTION switchyard_reserve(p_id text, p_owner text, p_key text, p_workspace text, p_amount bigint,
      p_byok boolean, p_now timestamptz, p_expires timestamptz,
      OUT o_outcome text, OUT o_limit text, OUT o_reset text, OUT o_room text) LANGUAGE plpgsql AS $$
    DECLARE
      v_key record;
      v_room bigint;
    BEGIN
      SELECT k.workspace_id, k.limit_nanos, k.limit_reset, k.include_byok_in_limit, k.disabled, k.deleted_at, k.expires_at
        INTO v_key FROM api_keys k WHERE k.id = p_key FOR NO KEY UPDATE;
      IF NOT FOUND OR v_key.deleted_at IS NOT NULL THEN o_outcome := 'key_deleted'; RETURN; END IF;
      IF v_key.disabled THEN o_outcome := 'key_disabled'; RETURN; END IF;
      IF v_key.expires_at IS NOT NULL AND v_key.expires_at <= p_now THEN o_outcome := 'key_expired'; RETURN; END IF;
      IF v_key.workspace_id <> p_workspace THEN o_outcome := 'wrong_workspace'; RETURN; END IF;
      DELETE FROM holds WHERE key_id = p_key AND expires_at <= p_now;
      IF v_key.limit_nanos IS NOT NULL AND (NOT p_byok OR v_key.include_byok_in_limit) THEN
        v_room := switchyard_key_room(p_key, v_key.limit_nanos, v_key.limit_reset, v_key.include_byok_in_limit, p_now, p_id);
        IF p_amount > v_room THEN
          o_outcome := 'key_limit';
          o_limit := v_key.limit_nanos::text;
          o_reset := v_key.limit_reset;
          o_room := v_room::text;
          RETURN;
        END IF;
      END IF;
      IF NOT p_byok THEN
        v_room := switchyard_balance_room(p_workspace, p_now, p_id);
        IF p_amount > v_room THEN
          o_outcome := 'workspace_credits';
          o_room := v_room::text;
          RETURN;
        END IF;
      END IF;
      INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner)
        VALUES (p_id, p_key, p_workspace, p_amount, p_byok, p_now, p_expires, p_owner);
      o_outcome := 'ok';
    END $$`)
  yield* sql.unsafe(`CREATE FUNCTION switchyard_settle(p_hold text, p_key text, p_generation text, p_model text,
      p_provider text, p_prompt_tokens integer, p_total_tokens integer, p_cost bigint, p_byok boolean, p_now timestamptz,
      OUT o_cost text, OUT o_capped boolean, OUT o_duplicate boolean) LANGUAGE plpgsql AS $$
    DECLARE
      v_key record;
      v_earlier bigint;
      v_hold record;
      v_has_hold boolean;
      v_held bigint := 0;
      v_covered bigint;
      v_charged bigint := p_cost;
    BEGIN
      SELECT k.workspace_id, k.limit_nanos, k.limit_reset, k.include_byok_in_limit
        INTO v_key FROM api_keys k WHERE k.id = p_key FOR NO KEY UPDATE;
      IF NOT FOUND THEN RAISE EXCEPTION 'settle: no key %', p_key; END IF;
      SELECT l.cost_nanos INTO v_earlier FROM ledger l WHERE l.generation_id = p_generation;
      IF FOUND THEN
        DELETE FROM holds WHERE id = p_hold;
        o_cost := v_earlier::text;
        o_capped := false;
        o_duplicate := true;
        RETURN;
      END IF;
      SELECT h.amount_nanos, h.is_byok INTO v_hold FROM holds h WHERE h.id = p_hold AND h.expires_at > p_now;
      v_has_hold := FOUND;
      IF v_has_hold THEN v_held := v_hold.amount_nanos; END IF;
      IF v_charged > 0 AND v_key.limit_nanos IS NOT NULL AND (NOT p_byok OR v_key.include_byok_in_limit) THEN
        v_covered := CASE WHEN v_has_hold AND (NOT v_hold.is_byok OR v_key.include_byok_in_limit) THEN v_held ELSE 0 END;
        IF v_charged > v_covered THEN
          v_charged := LEAST(v_charged, GREATEST(v_covered,
            switchyard_key_room(p_key, v_key.limit_nanos, v_key.limit_reset, v_key.include_byok_in_limit, p_now, p_hold)));
        END IF;
      END IF;
      IF v_charged > 0 AND NOT p_byok THEN
        v_covered := CASE WHEN v_has_hold AND NOT v_hold.is_byok THEN v_held ELSE 0 END;
        IF v_charged > v_covered THEN
          v_charged := LEAST(v_charged, GREATEST(v_covered, switchyard_balance_room(v_key.workspace_id, p_now, p_hold)));
        ELSE
          PERFORM 1 FROM credit_accounts WHERE workspace_id = v_key.workspace_id FOR UPDATE;
        END IF;
      END IF;
      INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
          is_byok, created_at)
        VALUES (p_generation, p_key, v_key.workspace_id, p_model, p_provider, p_prompt_tokens, p_total_tokens, v_charged,
          p_byok, p_now);
      IF v_charged > 0 THEN
        INSERT INTO key_spend AS s (key_id, day, spent_nanos, byok_nanos)
          VALUES
            (p_key, (p_now AT TIME ZONE 'UTC')::date, CASE WHEN p_byok THEN 0 ELSE v_charged END,
              CASE WHEN p_byok THEN v_charged ELSE 0 END),
            (p_key, '-infinity'::date, CASE WHEN p_byok THEN 0 ELSE v_charged END, CASE WHEN p_byok THEN v_charged ELSE 0 END)
          ON CONFLICT (key_id, day) DO UPDATE
            SET spent_nanos = s.spent_nanos + EXCLUDED.spent_nanos, byok_nanos = s.byok_nanos + EXCLUDED.byok_nanos;
        IF NOT p_byok THEN
          UPDATE credit_accounts SET usage_nanos = usage_nanos + v_charged, updated_at = p_now
            WHERE workspace_id = v_key.workspace_id;
        END IF;
      END IF;
      DELETE FROM holds WHERE id = p_hold;
      o_cost := v_charged::text;
      o_capped := v_charged < p_cost;
      o_duplicate := false;
    END $$`)
})
