import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * `switchyard_batch`: several reservations, settlements and releases in one statement.
 *
 * **Details**
 *
 * Takes a JSON array of operations (`{"op": "reserve" | "settle" | "release", ...}`, money and
 * times as strings) and returns a JSON array with one result per operation, in order: each
 * operation runs exactly as its own function would, one after the other. Before the first one,
 * the batch locks every key it names, then every credit account, each in sorted order, so
 * batches of several processes never wait on each other in a cycle.
 */
export const accountingBatch = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`CREATE FUNCTION switchyard_batch(p_ops jsonb) RETURNS jsonb LANGUAGE plpgsql AS $$
    DECLARE
      v_op jsonb;
      v_reserved record;
      v_settled record;
      v_out jsonb[] := '{}';
    BEGIN
      PERFORM 1 FROM api_keys WHERE id IN (
          SELECT e->>'key' FROM jsonb_array_elements(p_ops) e WHERE e->>'op' <> 'release')
        ORDER BY id FOR NO KEY UPDATE;
      PERFORM 1 FROM credit_accounts WHERE workspace_id IN (
          SELECT e->>'workspace' FROM jsonb_array_elements(p_ops) e WHERE e->>'op' <> 'release' AND NOT (e->>'byok')::boolean)
        ORDER BY workspace_id FOR UPDATE;
      FOR v_op IN SELECT e FROM jsonb_array_elements(p_ops) e LOOP
        IF v_op->>'op' = 'reserve' THEN
          SELECT * INTO v_reserved FROM switchyard_reserve(v_op->>'id', v_op->>'owner', v_op->>'key', v_op->>'workspace',
            (v_op->>'amount')::bigint, (v_op->>'byok')::boolean, (v_op->>'now')::timestamptz, (v_op->>'expires')::timestamptz);
          v_out := v_out || jsonb_build_object('o_outcome', v_reserved.o_outcome, 'o_limit', v_reserved.o_limit,
            'o_reset', v_reserved.o_reset, 'o_room', v_reserved.o_room);
        ELSIF v_op->>'op' = 'settle' THEN
          SELECT * INTO v_settled FROM switchyard_settle(v_op->>'id', v_op->>'key', v_op->>'generation', v_op->>'model',
            v_op->>'provider', (v_op->>'prompt_tokens')::integer, (v_op->>'total_tokens')::integer, (v_op->>'cost')::bigint,
            (v_op->>'byok')::boolean, (v_op->>'now')::timestamptz);
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
