import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Fenced spend leases: a lease row carries a fencing token, and a ledger row settled against a
 * lease is written only while the lease row still has the token it was admitted under.
 *
 * **Details**
 *
 * - `holds.fence`: a token from the `holds_fence` sequence, new whenever a hold row is created
 *   (a lease swept and granted again is a new row with a new token); grants that add to a row
 *   keep it.
 * - `switchyard_lease` (replaced): as in `0010_spend_leases`, and it also answers the lease row's
 *   token (`o_fence`, `NULL` when no row holds anything), refreshes the owner's `seen_at` in
 *   `gateway_processes` (a grant is a sign of life: no sweep takes the owner's leases for the stale
 *   time from then), and pushes the row's expiry back even when it grants nothing (a renewal).
 * - `switchyard_flush` (replaced): each row carries the `fence` of its lease; the lease rows are
 *   locked first, and a row whose lease is gone or has another token is not written: it is
 *   answered `o_fenced` (with the cost of a row already written under that generation id, if any).
 */
export const fencedLeases = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE SEQUENCE holds_fence`
  yield* sql`ALTER TABLE holds ADD COLUMN fence bigint NOT NULL DEFAULT nextval('holds_fence')`
  yield* sql`DROP FUNCTION switchyard_lease(text, text, text, text, boolean, bigint, bigint, bigint, bigint, bigint, timestamptz, timestamptz)`
  yield* sql.unsafe(`CREATE FUNCTION switchyard_lease(p_id text, p_owner text, p_key text, p_workspace text, p_byok boolean,
      p_need bigint, p_desired bigint, p_unit bigint, p_edge bigint, p_divisor bigint, p_now timestamptz, p_expires timestamptz,
      OUT o_outcome text, OUT o_granted text, OUT o_limit text, OUT o_reset text, OUT o_room text, OUT o_fence text) LANGUAGE plpgsql AS $$
    DECLARE
      v_key record;
      v_held bigint;
      v_avail bigint := 9223372036854775807;
      v_room bigint;
      v_budget record;
      v_target bigint;
      v_grant bigint;
      v_fence bigint;
    BEGIN
      SELECT k.workspace_id, k.limit_nanos, k.limit_reset, k.include_byok_in_limit, k.disabled, k.deleted_at, k.expires_at
        INTO v_key FROM api_keys k WHERE k.id = p_key FOR NO KEY UPDATE;
      IF NOT FOUND OR v_key.deleted_at IS NOT NULL THEN o_outcome := 'key_deleted'; RETURN; END IF;
      IF v_key.disabled THEN o_outcome := 'key_disabled'; RETURN; END IF;
      IF v_key.expires_at IS NOT NULL AND v_key.expires_at <= p_now THEN o_outcome := 'key_expired'; RETURN; END IF;
      IF v_key.workspace_id <> p_workspace THEN o_outcome := 'wrong_workspace'; RETURN; END IF;
      DELETE FROM holds WHERE key_id = p_key AND expires_at <= p_now AND id <> p_id;
      SELECT h.amount_nanos INTO v_held FROM holds h WHERE h.id = p_id;
      IF NOT FOUND THEN v_held := 0; END IF;
      IF v_key.limit_nanos IS NOT NULL AND (NOT p_byok OR v_key.include_byok_in_limit) THEN
        v_room := switchyard_key_room(p_key, v_key.limit_nanos, v_key.limit_reset, v_key.include_byok_in_limit, p_now, p_id) - v_held;
        IF p_need > v_room THEN
          o_outcome := 'key_limit'; o_limit := v_key.limit_nanos::text; o_reset := v_key.limit_reset; o_room := v_room::text;
          RETURN;
        END IF;
        v_avail := LEAST(v_avail, v_room);
      END IF;
      SELECT * INTO v_budget FROM switchyard_budget_room(p_workspace, p_byok, p_now, p_id);
      IF v_budget.o_room IS NOT NULL THEN
        v_room := v_budget.o_room - v_held;
        IF p_need > v_room THEN
          o_outcome := 'workspace_budget'; o_limit := v_budget.o_limit::text; o_reset := v_budget.o_interval; o_room := v_room::text;
          RETURN;
        END IF;
        v_avail := LEAST(v_avail, v_room);
      END IF;
      IF NOT p_byok THEN
        v_room := switchyard_balance_room(p_workspace, p_now, p_id);
        IF v_room < 9223372036854775807 THEN
          v_room := v_room - v_held;
          IF p_need > v_room THEN o_outcome := 'workspace_credits'; o_room := v_room::text; RETURN; END IF;
          v_avail := LEAST(v_avail, v_room);
        END IF;
      END IF;
      IF v_avail <= p_edge THEN
        v_grant := p_need;
      ELSE
        v_target := LEAST(p_desired, v_avail / p_divisor);
        v_grant := CASE WHEN v_target <= p_need THEN p_need ELSE p_need + ((v_target - p_need) / p_unit) * p_unit END;
      END IF;
      -- The grant is a sign of life: no sweep takes this process's leases for the stale time from now.
      INSERT INTO gateway_processes (id, started_at, seen_at) VALUES (p_owner, now(), now())
        ON CONFLICT (id) DO UPDATE SET seen_at = now();
      IF v_grant > 0 THEN
        INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner)
          VALUES (p_id, p_key, p_workspace, v_grant, p_byok, p_now, p_expires, p_owner)
          ON CONFLICT (id) DO UPDATE SET amount_nanos = holds.amount_nanos + EXCLUDED.amount_nanos,
            expires_at = GREATEST(holds.expires_at, EXCLUDED.expires_at)
          RETURNING fence INTO v_fence;
      ELSE
        UPDATE holds SET expires_at = GREATEST(expires_at, p_expires) WHERE id = p_id RETURNING fence INTO v_fence;
      END IF;
      o_fence := v_fence::text;
      o_outcome := 'ok';
      o_granted := v_grant::text;
      o_room := (v_avail - v_grant)::text;
    END $$`)
  yield* sql`DROP FUNCTION switchyard_flush(jsonb, timestamptz)`
  yield* sql.unsafe(`CREATE FUNCTION switchyard_flush(p_rows jsonb, p_expires timestamptz)
      RETURNS TABLE (o_generation text, o_cost text, o_written boolean, o_fenced boolean) LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM 1 FROM api_keys WHERE id IN (SELECT DISTINCT e->>'key' FROM jsonb_array_elements(p_rows) e)
        ORDER BY id FOR NO KEY UPDATE;
      PERFORM switchyard_lock_account(ws.w) FROM (
          SELECT DISTINCT e->>'workspace' AS w FROM jsonb_array_elements(p_rows) e ORDER BY 1) ws;
      -- The leases' rows, locked: a sweep (SKIP LOCKED) leaves them to this write, and a lease taken
      -- before it is found gone or with another token.
      PERFORM 1 FROM holds WHERE id IN (SELECT DISTINCT e->>'lease' FROM jsonb_array_elements(p_rows) e) ORDER BY id FOR UPDATE;
      RETURN QUERY
      WITH input AS (
        SELECT * FROM jsonb_to_recordset(p_rows) AS r(generation text, key text, workspace text, model text, provider text,
          prompt_tokens integer, total_tokens integer, cost bigint, byok boolean, created timestamptz, latency_ms integer,
          cached_items integer, cached_tokens integer, lease text, fence bigint)
      ), admitted AS (
        SELECT i.* FROM input i
          WHERE i.lease IS NULL OR EXISTS (SELECT 1 FROM holds h WHERE h.id = i.lease AND h.fence = i.fence)
      ), written AS (
        INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
            is_byok, created_at, latency_ms, cached_items, cached_tokens)
          SELECT i.generation, i.key, i.workspace, i.model, i.provider, i.prompt_tokens, i.total_tokens, i.cost, i.byok, i.created,
              i.latency_ms, COALESCE(i.cached_items, 0), COALESCE(i.cached_tokens, 0)
            FROM admitted i
          ON CONFLICT (generation_id) DO NOTHING
          RETURNING generation_id, key_id, workspace_id, cost_nanos, is_byok, created_at
      ), charged AS (
        SELECT w.*, d.day FROM written w
          CROSS JOIN LATERAL (VALUES ((w.created_at AT TIME ZONE 'UTC')::date), ('-infinity'::date)) AS d(day)
          WHERE w.cost_nanos > 0
      ), key_days AS (
        INSERT INTO key_spend AS s (key_id, day, spent_nanos, byok_nanos)
          SELECT c.key_id, c.day, SUM(CASE WHEN c.is_byok THEN 0 ELSE c.cost_nanos END), SUM(CASE WHEN c.is_byok THEN c.cost_nanos ELSE 0 END)
            FROM charged c GROUP BY c.key_id, c.day
          ON CONFLICT (key_id, day) DO UPDATE
            SET spent_nanos = s.spent_nanos + EXCLUDED.spent_nanos, byok_nanos = s.byok_nanos + EXCLUDED.byok_nanos
          RETURNING 1
      ), workspace_days AS (
        INSERT INTO workspace_spend AS s (workspace_id, day, spent_nanos, byok_nanos)
          SELECT c.workspace_id, c.day, SUM(CASE WHEN c.is_byok THEN 0 ELSE c.cost_nanos END), SUM(CASE WHEN c.is_byok THEN c.cost_nanos ELSE 0 END)
            FROM charged c GROUP BY c.workspace_id, c.day
          ON CONFLICT (workspace_id, day) DO UPDATE
            SET spent_nanos = s.spent_nanos + EXCLUDED.spent_nanos, byok_nanos = s.byok_nanos + EXCLUDED.byok_nanos
          RETURNING 1
      ), usage AS (
        UPDATE credit_accounts a SET usage_nanos = a.usage_nanos + u.total, updated_at = u.last
          FROM (SELECT w.workspace_id, SUM(w.cost_nanos) AS total, MAX(w.created_at) AS last FROM written w
            WHERE NOT w.is_byok AND w.cost_nanos > 0 GROUP BY w.workspace_id) u
          WHERE a.workspace_id = u.workspace_id
          RETURNING 1
      ), leases AS (
        UPDATE holds h SET amount_nanos = GREATEST(h.amount_nanos - l.total, 0), expires_at = GREATEST(h.expires_at, p_expires)
          FROM (SELECT i.lease, SUM(w.cost_nanos) AS total FROM written w JOIN input i ON i.generation = w.generation_id
            WHERE i.lease IS NOT NULL GROUP BY i.lease) l
          WHERE h.id = l.lease
          RETURNING 1
      )
      SELECT i.generation, COALESCE(w.cost_nanos, e.cost_nanos)::text, w.generation_id IS NOT NULL, a.generation IS NULL
        FROM input i
        LEFT JOIN admitted a ON a.generation = i.generation
        LEFT JOIN written w ON w.generation_id = i.generation
        LEFT JOIN ledger e ON w.generation_id IS NULL AND e.generation_id = i.generation;
    END $$`)
})
