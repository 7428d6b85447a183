import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Embeddings served from the cache in the ledger, and a request the cache served entirely
 * recorded without a hold.
 *
 * **Details**
 *
 * - `ledger.cached_items` and `ledger.cached_tokens`: how many input items the embeddings cache
 *   served and the prompt tokens those items were billed for when they were first embedded.
 *   `prompt_tokens` and `total_tokens` stay what the upstream counted (and charged for); the
 *   cost, key usage, budgets and credits grow only by that.
 * - `switchyard_admit`: the checks of a reservation (key deleted, disabled or expired, the key in
 *   its workspace, key limit, workspace budgets, workspace credits) without the hold; `0007`'s
 *   `switchyard_reserve` becomes admit and then the hold, unchanged in behaviour.
 * - `switchyard_settle` takes the cached items and tokens (default 0) into the ledger row.
 * - `switchyard_record`: a request that costs nothing and held nothing (every item came from the
 *   cache) gets its ledger row, at cost 0, after the same checks at amount 0: a disabled,
 *   deleted or expired key is refused, and so is a key, budget or balance already spent beyond its
 *   limit (room below 0). Idempotent on the generation id, like settle.
 * - `switchyard_batch` carries `record` operations and the cached counts of settlements.
 */
export const cachedTokens = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE ledger
    ADD COLUMN cached_items integer NOT NULL DEFAULT 0 CHECK (cached_items >= 0),
    ADD COLUMN cached_tokens integer NOT NULL DEFAULT 0 CHECK (cached_tokens >= 0)`
  yield* sql.unsafe(`CREATE FUNCTION switchyard_admit(p_id text, p_key text, p_workspace text,
      p_amount bigint, p_byok boolean, p_now timestamptz,
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
      o_outcome := 'ok';
    END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION switchyard_reserve(p_id text, p_owner text, p_key text, p_workspace text,
      p_amount bigint, p_byok boolean, p_now timestamptz, p_expires timestamptz,
      OUT o_outcome text, OUT o_limit text, OUT o_reset text, OUT o_room text) LANGUAGE plpgsql AS $$
    BEGIN
      SELECT a.o_outcome, a.o_limit, a.o_reset, a.o_room INTO o_outcome, o_limit, o_reset, o_room
        FROM switchyard_admit(p_id, p_key, p_workspace, p_amount, p_byok, p_now) a;
      IF o_outcome <> 'ok' THEN RETURN; END IF;
      INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner)
        VALUES (p_id, p_key, p_workspace, p_amount, p_byok, p_now, p_expires, p_owner);
    END $$`)
  yield* sql.unsafe(`DROP FUNCTION switchyard_settle(text, text, text, text, text, integer, integer, bigint, boolean, timestamptz, integer)`)
  yield* sql.unsafe(`CREATE FUNCTION switchyard_settle(p_hold text, p_key text, p_generation text, p_model text,
      p_provider text, p_prompt_tokens integer, p_total_tokens integer, p_cost bigint, p_byok boolean, p_now timestamptz,
      p_latency_ms integer DEFAULT NULL, p_cached_items integer DEFAULT 0, p_cached_tokens integer DEFAULT 0,
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
          is_byok, created_at, latency_ms, cached_items, cached_tokens)
        VALUES (p_generation, p_key, v_key.workspace_id, p_model, p_provider, p_prompt_tokens, p_total_tokens, v_charged,
          p_byok, p_now, p_latency_ms, p_cached_items, p_cached_tokens);
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
  yield* sql.unsafe(`CREATE FUNCTION switchyard_record(p_key text, p_workspace text, p_generation text, p_model text,
      p_provider text, p_prompt_tokens integer, p_total_tokens integer, p_byok boolean, p_now timestamptz,
      p_latency_ms integer, p_cached_items integer, p_cached_tokens integer,
      OUT o_outcome text, OUT o_limit text, OUT o_reset text, OUT o_room text, OUT o_duplicate boolean) LANGUAGE plpgsql AS $$
    BEGIN
      o_duplicate := false;
      PERFORM 1 FROM ledger l WHERE l.generation_id = p_generation;
      IF FOUND THEN
        o_outcome := 'ok';
        o_duplicate := true;
        RETURN;
      END IF;
      SELECT a.o_outcome, a.o_limit, a.o_reset, a.o_room INTO o_outcome, o_limit, o_reset, o_room
        FROM switchyard_admit('', p_key, p_workspace, 0, p_byok, p_now) a;
      IF o_outcome <> 'ok' THEN RETURN; END IF;
      INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
          is_byok, created_at, latency_ms, cached_items, cached_tokens)
        VALUES (p_generation, p_key, p_workspace, p_model, p_provider, p_prompt_tokens, p_total_tokens, 0,
          p_byok, p_now, p_latency_ms, p_cached_items, p_cached_tokens);
    END $$`)
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION switchyard_batch(p_ops jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    DECLARE
      v_op jsonb;
      v_reserved record;
      v_settled record;
      v_recorded record;
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
            (v_op->>'byok')::boolean, (v_op->>'now')::timestamptz, (v_op->>'latency_ms')::integer,
            COALESCE((v_op->>'cached_items')::integer, 0), COALESCE((v_op->>'cached_tokens')::integer, 0));
          v_out := v_out || jsonb_build_object('o_cost', v_settled.o_cost, 'o_capped', v_settled.o_capped,
            'o_duplicate', v_settled.o_duplicate);
        ELSIF v_op->>'op' = 'record' THEN
          SELECT * INTO v_recorded FROM switchyard_record(v_op->>'key', v_op->>'workspace', v_op->>'generation',
            v_op->>'model', v_op->>'provider', (v_op->>'prompt_tokens')::integer, (v_op->>'total_tokens')::integer,
            (v_op->>'byok')::boolean, (v_op->>'now')::timestamptz, (v_op->>'latency_ms')::integer,
            (v_op->>'cached_items')::integer, (v_op->>'cached_tokens')::integer);
          v_out := v_out || jsonb_build_object('o_outcome', v_recorded.o_outcome, 'o_limit', v_recorded.o_limit,
            'o_reset', v_recorded.o_reset, 'o_room', v_recorded.o_room, 'o_duplicate', v_recorded.o_duplicate);
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
