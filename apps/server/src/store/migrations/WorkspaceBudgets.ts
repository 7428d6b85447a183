import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Workspaces as managed resources, their members, their budgets, and the spend counters that
 * enforce those budgets with the same hold-then-settle exactness as key limits.
 *
 * **Details**
 *
 * - `workspaces` gains the public API's settings, `updated_at` and soft deletion (a deleted
 *   workspace's ledger rows stay; its slug becomes free again).
 * - `memberships` gains an id and a creation time; the first-start role `owner` becomes `admin`.
 * - `workspace_budgets`: one limit per workspace and interval (`daily`, `weekly`, `monthly`,
 *   `lifetime`). `workspaces.include_byok_in_budgets` says whether BYOK spend counts.
 * - `workspace_spend`: per workspace and UTC day, the non-BYOK and BYOK nanos the ledger charged,
 *   plus a `-infinity` row of all-time totals, as `key_spend` does per key; backfilled here.
 * - `ledger.latency_ms`: how long the served request took, for `GET /generation`.
 *
 * `switchyard_budget_room` is the one more limit checked beside the key limit: the smallest room
 * left under any of the workspace's budgets, counting open holds. `switchyard_reserve` checks it
 * after the key limit and before the balance; `switchyard_settle` caps by it and counts the spend;
 * both lock the workspace's credit account row before reading budgets (key row first, account
 * second, the order every writer follows). `switchyard_batch` now locks the credit account of
 * every operation (BYOK ones included, since a budget may count them) in sorted order.
 */
export const workspaceBudgets = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE workspaces
    ADD COLUMN description text,
    ADD COLUMN created_by text,
    ADD COLUMN default_text_model text,
    ADD COLUMN default_image_model text,
    ADD COLUMN default_provider_sort text,
    ADD COLUMN include_byok_in_budgets boolean NOT NULL DEFAULT false,
    ADD COLUMN updated_at timestamptz,
    ADD COLUMN deleted_at timestamptz`
  yield* sql`ALTER TABLE workspaces DROP CONSTRAINT workspaces_slug_key`
  yield* sql`CREATE UNIQUE INDEX workspaces_live_slug ON workspaces (slug) WHERE deleted_at IS NULL`
  yield* sql`ALTER TABLE memberships
    ADD COLUMN id text NOT NULL DEFAULT gen_random_uuid()::text,
    ADD COLUMN created_at timestamptz NOT NULL DEFAULT now()`
  yield* sql`UPDATE memberships SET role = 'admin' WHERE role = 'owner'`
  yield* sql`CREATE INDEX memberships_workspace ON memberships (workspace_id, created_at)`
  yield* sql`CREATE TABLE workspace_budgets (
    id text PRIMARY KEY,
    workspace_id text NOT NULL REFERENCES workspaces(id),
    interval text NOT NULL CHECK (interval IN ('daily', 'weekly', 'monthly', 'lifetime')),
    limit_nanos bigint NOT NULL CHECK (limit_nanos >= 0),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (workspace_id, interval)
  )`
  yield* sql`CREATE TABLE workspace_spend (
    workspace_id text NOT NULL REFERENCES workspaces(id),
    day date NOT NULL,
    spent_nanos bigint NOT NULL DEFAULT 0 CHECK (spent_nanos >= 0),
    byok_nanos bigint NOT NULL DEFAULT 0 CHECK (byok_nanos >= 0),
    PRIMARY KEY (workspace_id, day)
  )`
  yield* sql`INSERT INTO workspace_spend (workspace_id, day, spent_nanos, byok_nanos)
    SELECT workspace_id, (created_at AT TIME ZONE 'UTC')::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1, 2
    UNION ALL
    SELECT workspace_id, '-infinity'::date,
        COALESCE(SUM(cost_nanos) FILTER (WHERE NOT is_byok), 0), COALESCE(SUM(cost_nanos) FILTER (WHERE is_byok), 0)
      FROM ledger WHERE cost_nanos > 0 GROUP BY 1`
  yield* sql`ALTER TABLE ledger ADD COLUMN latency_ms integer`
  yield* sql.unsafe(`CREATE FUNCTION switchyard_lock_account(p_workspace text) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO credit_accounts (workspace_id) VALUES (p_workspace) ON CONFLICT (workspace_id) DO NOTHING;
        PERFORM 1 FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE;
      END IF;
    END $$`)
  yield* sql.unsafe(`CREATE FUNCTION switchyard_budget_room(p_workspace text, p_byok boolean, p_now timestamptz,
      p_exclude_hold text, OUT o_interval text, OUT o_limit bigint, OUT o_room bigint) LANGUAGE plpgsql AS $$
    DECLARE
      v_include_byok boolean;
      v_held bigint;
      v_budget record;
      v_spent bigint;
    BEGIN
      PERFORM 1 FROM workspace_budgets b WHERE b.workspace_id = p_workspace;
      IF NOT FOUND THEN RETURN; END IF;
      SELECT w.include_byok_in_budgets INTO v_include_byok FROM workspaces w WHERE w.id = p_workspace;
      IF NOT FOUND OR (p_byok AND NOT v_include_byok) THEN RETURN; END IF;
      PERFORM switchyard_lock_account(p_workspace);
      SELECT COALESCE(SUM(h.amount_nanos), 0) INTO v_held FROM holds h
        WHERE h.workspace_id = p_workspace AND h.expires_at > p_now AND (NOT h.is_byok OR v_include_byok)
          AND h.id <> p_exclude_hold;
      FOR v_budget IN SELECT b.interval, b.limit_nanos FROM workspace_budgets b WHERE b.workspace_id = p_workspace LOOP
        SELECT COALESCE(SUM(s.spent_nanos + CASE WHEN v_include_byok THEN s.byok_nanos ELSE 0 END), 0) INTO v_spent
          FROM workspace_spend s WHERE s.workspace_id = p_workspace AND CASE v_budget.interval
            WHEN 'lifetime' THEN s.day = '-infinity'::date
            WHEN 'daily' THEN s.day >= (p_now AT TIME ZONE 'UTC')::date
            WHEN 'weekly' THEN s.day >= date_trunc('week', p_now AT TIME ZONE 'UTC')::date
            ELSE s.day >= date_trunc('month', p_now AT TIME ZONE 'UTC')::date END;
        IF o_room IS NULL OR v_budget.limit_nanos - v_spent - v_held < o_room THEN
          o_interval := v_budget.interval;
          o_limit := v_budget.limit_nanos;
          o_room := v_budget.limit_nanos - v_spent - v_held;
        END IF;
      END LOOP;
    END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION switchyard_reserve(p_id text, p_owner text, p_key text, p_workspace text,
      p_amount bigint, p_byok boolean, p_now timestamptz, p_expires timestamptz,
      OUT o_outcome text, OUT o_limit text, OUT o_reset text, OUT o_room text) LANGUAGE plpgsql AS $$
    DECLARE
      v_key record;
      v_room bigint;
      v_budget record;
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
      SELECT * INTO v_budget FROM switchyard_budget_room(p_workspace, p_byok, p_now, p_id);
      IF v_budget.o_room IS NOT NULL AND p_amount > v_budget.o_room THEN
        o_outcome := 'workspace_budget';
        o_limit := v_budget.o_limit::text;
        o_reset := v_budget.o_interval;
        o_room := v_budget.o_room::text;
        RETURN;
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
  yield* sql.unsafe(`DROP FUNCTION switchyard_settle(text, text, text, text, text, integer, integer, bigint, boolean, timestamptz)`)
  yield* sql.unsafe(`CREATE FUNCTION switchyard_settle(p_hold text, p_key text, p_generation text, p_model text,
      p_provider text, p_prompt_tokens integer, p_total_tokens integer, p_cost bigint, p_byok boolean, p_now timestamptz,
      p_latency_ms integer DEFAULT NULL,
      OUT o_cost text, OUT o_capped boolean, OUT o_duplicate boolean) LANGUAGE plpgsql AS $$
    DECLARE
      v_key record;
      v_earlier bigint;
      v_hold record;
      v_has_hold boolean;
      v_held bigint := 0;
      v_covered bigint;
      v_charged bigint := p_cost;
      v_budget record;
      v_include_byok boolean;
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
      IF v_charged > 0 THEN
        SELECT * INTO v_budget FROM switchyard_budget_room(v_key.workspace_id, p_byok, p_now, p_hold);
        IF v_budget.o_room IS NOT NULL THEN
          SELECT w.include_byok_in_budgets INTO v_include_byok FROM workspaces w WHERE w.id = v_key.workspace_id;
          v_covered := CASE WHEN v_has_hold AND (NOT v_hold.is_byok OR v_include_byok) THEN v_held ELSE 0 END;
          IF v_charged > v_covered THEN
            v_charged := LEAST(v_charged, GREATEST(v_covered, v_budget.o_room));
          END IF;
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
          is_byok, created_at, latency_ms)
        VALUES (p_generation, p_key, v_key.workspace_id, p_model, p_provider, p_prompt_tokens, p_total_tokens, v_charged,
          p_byok, p_now, p_latency_ms);
      IF v_charged > 0 THEN
        INSERT INTO key_spend AS s (key_id, day, spent_nanos, byok_nanos)
          VALUES
            (p_key, (p_now AT TIME ZONE 'UTC')::date, CASE WHEN p_byok THEN 0 ELSE v_charged END,
              CASE WHEN p_byok THEN v_charged ELSE 0 END),
            (p_key, '-infinity'::date, CASE WHEN p_byok THEN 0 ELSE v_charged END, CASE WHEN p_byok THEN v_charged ELSE 0 END)
          ON CONFLICT (key_id, day) DO UPDATE
            SET spent_nanos = s.spent_nanos + EXCLUDED.spent_nanos, byok_nanos = s.byok_nanos + EXCLUDED.byok_nanos;
        INSERT INTO workspace_spend AS s (workspace_id, day, spent_nanos, byok_nanos)
          VALUES
            (v_key.workspace_id, (p_now AT TIME ZONE 'UTC')::date, CASE WHEN p_byok THEN 0 ELSE v_charged END,
              CASE WHEN p_byok THEN v_charged ELSE 0 END),
            (v_key.workspace_id, '-infinity'::date, CASE WHEN p_byok THEN 0 ELSE v_charged END,
              CASE WHEN p_byok THEN v_charged ELSE 0 END)
          ON CONFLICT (workspace_id, day) DO UPDATE
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
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION switchyard_batch(p_ops jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    DECLARE
      v_op jsonb;
      v_reserved record;
      v_settled record;
      v_out jsonb[] := '{}';
    BEGIN
      PERFORM 1 FROM api_keys WHERE id IN (
          SELECT e->>'key' FROM jsonb_array_elements(p_ops) e WHERE e->>'op' <> 'release')
        ORDER BY id FOR NO KEY UPDATE;
      PERFORM switchyard_lock_account(w) FROM (
          SELECT DISTINCT e->>'workspace' AS w FROM jsonb_array_elements(p_ops) e WHERE e->>'op' <> 'release' ORDER BY 1) ws;
      FOR v_op IN SELECT e FROM jsonb_array_elements(p_ops) e LOOP
        IF v_op->>'op' = 'reserve' THEN
          SELECT * INTO v_reserved FROM switchyard_reserve(v_op->>'id', v_op->>'owner', v_op->>'key', v_op->>'workspace',
            (v_op->>'amount')::bigint, (v_op->>'byok')::boolean, (v_op->>'now')::timestamptz, (v_op->>'expires')::timestamptz);
          v_out := v_out || jsonb_build_object('o_outcome', v_reserved.o_outcome, 'o_limit', v_reserved.o_limit,
            'o_reset', v_reserved.o_reset, 'o_room', v_reserved.o_room);
        ELSIF v_op->>'op' = 'settle' THEN
          SELECT * INTO v_settled FROM switchyard_settle(v_op->>'id', v_op->>'key', v_op->>'generation', v_op->>'model',
            v_op->>'provider', (v_op->>'prompt_tokens')::integer, (v_op->>'total_tokens')::integer, (v_op->>'cost')::bigint,
            (v_op->>'byok')::boolean, (v_op->>'now')::timestamptz, (v_op->>'latency_ms')::integer);
          v_out := v_out || jsonb_build_object('o_cost', v_settled.o_cost, 'o_capped', v_settled.o_capped,
            'o_duplicate', v_settled.o_duplicate);
        ELSIF v_op->>'op' = 'release' THEN
          DELETE FROM holds WHERE id = v_op->>'id';
          v_out := v_out || '{}'::jsonb;
        ELSE
          RAISE EXCEPTION 'switchyard_batch: unknown operation %', v_op->>'op';
        END IF;
      END LOOP;
      RETURN to_jsonb(v_out);
    END $$`)
})
