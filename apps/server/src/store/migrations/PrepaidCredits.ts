import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Prepaid workspace credits become opt-in.
 *
 * **Details**
 *
 * `credit_accounts.prepaid` says whether the workspace's balance (`credits_nanos - usage_nanos`)
 * stops spending. It is `false` for a new workspace, so a fresh install serves paid models with
 * no operator step, and the first credit grant (`POST /credits`) turns it on. Accounts that
 * already hold credits keep enforcing them.
 *
 * Only `switchyard_balance_room` changes: for a workspace without prepaid credits it answers the
 * largest `bigint`, so `switchyard_reserve` never refuses and `switchyard_settle` never caps for
 * the workspace's sake. It still takes the account's row lock, so lock order and the SQL of
 * reserve, settle and the batch stay as they were; spend is recorded exactly either way.
 */
export const prepaidCredits = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE credit_accounts ADD COLUMN prepaid boolean NOT NULL DEFAULT false`
  yield* sql`UPDATE credit_accounts SET prepaid = true WHERE credits_nanos > 0`
  yield* sql.unsafe(`CREATE OR REPLACE FUNCTION switchyard_balance_room(p_workspace text, p_now timestamptz, p_exclude_hold text)
      RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE
      v_account record;
      v_held bigint;
    BEGIN
      SELECT credits_nanos, usage_nanos, prepaid INTO v_account FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE;
      IF NOT FOUND THEN
        INSERT INTO credit_accounts (workspace_id) VALUES (p_workspace) ON CONFLICT (workspace_id) DO NOTHING;
        SELECT credits_nanos, usage_nanos, prepaid INTO v_account FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE;
      END IF;
      IF NOT v_account.prepaid THEN RETURN 9223372036854775807; END IF;
      SELECT COALESCE(SUM(h.amount_nanos), 0) INTO v_held FROM holds h
        WHERE h.workspace_id = p_workspace AND h.expires_at > p_now AND NOT h.is_byok AND h.id <> p_exclude_hold;
      RETURN v_account.credits_nanos - v_account.usage_nanos - v_held;
    END $$`)
})
