/**
 * The money SQL: the current definition of every PL/pgSQL function the gateway calls, one exported
 * constant per function, and the statements each runs, named so that the plan test
 * (`test/money/MoneyPlans.test.ts`) explains the very text the function runs.
 *
 * **Details**
 *
 * - The gateway calls three of them: `switchyard_lease` (a grant to a spend lease),
 *   `switchyard_lease_return` (a hand-back) and `switchyard_flush` (a batch of ledger rows). The
 *   other four are their parts: the room left under a key limit, under the workspace's budgets and
 *   in its prepaid credits, and the lock of a workspace's credit account.
 * - Locks: every writer takes the key rows first, then the credit accounts, each in sorted order,
 *   so processes sharing one PostgreSQL never wait on each other in a cycle.
 * - {@link replace} creates all of them from these definitions whenever a migration ran
 *   (`Migrations.migrate`): migrations change tables, never functions.
 * - Every statement on a large table (`ledger`, `holds`, `key_spend`, `workspace_spend`) finds its
 *   rows through an index whatever the statistics say: equality on a key's leading columns, a
 *   correlated primary-key lookup, or `= ANY (ARRAY(...))` on a primary key; never a join the planner
 *   may turn into a hash join over a full scan.
 *
 * **Changing one**
 *
 * Edit it here, and ship it with a migration (a version whose stores run no migration keeps the
 * functions they have): `MoneyFunctions.test.ts` compares every definition with those of the
 * commit that brought the current migrations, and fails until a new one comes with the change.
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export interface MoneyFunction {
  readonly name: string
  /** The parameter list, with `OUT` parameters and defaults, as `CREATE FUNCTION` takes it. */
  readonly parameters: string
  /** `RETURNS ...`, or empty when `OUT` parameters say it. */
  readonly returns: string
  /** `DECLARE` lines (name and type), empty for none. */
  readonly declare: string
  /** The SQL statements the body runs, by name, as the plan test explains them. */
  readonly statements: Readonly<Record<string, string>>
  readonly body: string
}

/** The `CREATE OR REPLACE FUNCTION` statement of a function. */
export const definition = (f: MoneyFunction): string =>
  `CREATE OR REPLACE FUNCTION ${f.name}(${f.parameters}) ${f.returns} LANGUAGE plpgsql AS $$
    ${f.declare.length > 0 ? `DECLARE\n${f.declare}` : ""}
    BEGIN
${f.body}
    END $$`

/** `PERFORM` of a `SELECT` statement (its result thrown away). */
const perform = (select: string) => `PERFORM ${select.replace(/^\s*SELECT\s+/u, "")}`

// ---------------------------------------------------------------------------------------------

const lockAccount = {
  lock: `SELECT 1 FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE`,
  open: `INSERT INTO credit_accounts (workspace_id) VALUES (p_workspace) ON CONFLICT (workspace_id) DO NOTHING`
}

/**
 * `switchyard_lock_account(workspace)`: locks the workspace's credit account row, creating it
 * (no credits, not prepaid) when the workspace has none yet.
 */
const switchyardLockAccount: MoneyFunction = {
  name: "switchyard_lock_account",
  parameters: "p_workspace text",
  returns: "RETURNS void",
  declare: "",
  statements: lockAccount,
  body: `
      ${perform(lockAccount.lock)};
      IF NOT FOUND THEN
        ${lockAccount.open};
        ${perform(lockAccount.lock)};
      END IF;`
}

// ---------------------------------------------------------------------------------------------

const keyRoom = {
  spent: `SELECT COALESCE(SUM(s.spent_nanos + CASE WHEN p_include_byok THEN s.byok_nanos ELSE 0 END), 0)
        FROM key_spend s WHERE s.key_id = p_key AND s.day BETWEEN v_from AND v_to`,
  held: `SELECT COALESCE(SUM(h.amount_nanos), 0) FROM holds h
        WHERE h.key_id = p_key AND h.expires_at > p_now AND (NOT h.is_byok OR p_include_byok) AND h.id <> p_exclude_hold`
}

/**
 * The first day of a limit window (`p_reset`: `daily`, `weekly`, `monthly`, else all time) and its
 * last, as the spend counters date them: all time is the one row dated `-infinity`, a window the
 * day rows from its first UTC day on.
 */
const windowDays = (reset: string) => `
      v_from := CASE ${reset}
        WHEN 'daily' THEN (p_now AT TIME ZONE 'UTC')::date
        WHEN 'weekly' THEN date_trunc('week', p_now AT TIME ZONE 'UTC')::date
        WHEN 'monthly' THEN date_trunc('month', p_now AT TIME ZONE 'UTC')::date
        ELSE '-infinity'::date END;
      v_to := CASE WHEN v_from = '-infinity'::date THEN '-infinity'::date ELSE 'infinity'::date END;`

/**
 * `switchyard_key_room(key, limit, reset, include_byok, now, exclude_hold)`: what a key may still
 * spend under its limit: the limit, less what the per-day counters (`key_spend`) say it spent in
 * the window (`reset` `NULL`: all time), less the open holds on it but `exclude_hold`. BYOK spend
 * and holds count when `include_byok`.
 */
const switchyardKeyRoom: MoneyFunction = {
  name: "switchyard_key_room",
  parameters: "p_key text, p_limit bigint, p_reset text, p_include_byok boolean, p_now timestamptz, p_exclude_hold text",
  returns: "RETURNS bigint",
  declare: `      v_spent bigint;
      v_held bigint;
      v_from date;
      v_to date;`,
  statements: keyRoom,
  body: `${windowDays("p_reset")}
      ${keyRoom.spent} INTO v_spent;
      ${keyRoom.held} INTO v_held;
      RETURN p_limit - v_spent - v_held;`
}

// ---------------------------------------------------------------------------------------------

const balanceRoom = {
  account: `SELECT credits_nanos, usage_nanos, prepaid FROM credit_accounts WHERE workspace_id = p_workspace FOR UPDATE`,
  open: lockAccount.open,
  held: `SELECT COALESCE(SUM(h.amount_nanos), 0) FROM holds h
        WHERE h.workspace_id = p_workspace AND h.expires_at > p_now AND NOT h.is_byok AND h.id <> p_exclude_hold`
}

/**
 * `switchyard_balance_room(workspace, now, exclude_hold)`: what the workspace's prepaid credits
 * still allow (credits, less usage, less the open non-BYOK holds but `exclude_hold`), or the
 * largest `bigint` when the workspace has no prepaid credits (migration `0006_prepaid_credits`).
 * Locks the credit account row either way, creating it when missing.
 */
const switchyardBalanceRoom: MoneyFunction = {
  name: "switchyard_balance_room",
  parameters: "p_workspace text, p_now timestamptz, p_exclude_hold text",
  returns: "RETURNS bigint",
  declare: `      v_account record;
      v_held bigint;`,
  statements: balanceRoom,
  body: `
      ${balanceRoom.account} INTO v_account;
      IF NOT FOUND THEN
        ${balanceRoom.open};
        ${balanceRoom.account} INTO v_account;
      END IF;
      IF NOT v_account.prepaid THEN RETURN 9223372036854775807; END IF;
      ${balanceRoom.held} INTO v_held;
      RETURN v_account.credits_nanos - v_account.usage_nanos - v_held;`
}

// ---------------------------------------------------------------------------------------------

const budgetRoom = {
  any: `SELECT 1 FROM workspace_budgets b WHERE b.workspace_id = p_workspace`,
  includeByok: `SELECT w.include_byok_in_budgets FROM workspaces w WHERE w.id = p_workspace`,
  held: `SELECT COALESCE(SUM(h.amount_nanos), 0) FROM holds h
        WHERE h.workspace_id = p_workspace AND h.expires_at > p_now AND (NOT h.is_byok OR v_include_byok)
          AND h.id <> p_exclude_hold`,
  budgets: `SELECT b.interval, b.limit_nanos FROM workspace_budgets b WHERE b.workspace_id = p_workspace`,
  spent: `SELECT COALESCE(SUM(s.spent_nanos + CASE WHEN v_include_byok THEN s.byok_nanos ELSE 0 END), 0)
          FROM workspace_spend s WHERE s.workspace_id = p_workspace AND s.day BETWEEN v_from AND v_to`
}

/**
 * `switchyard_budget_room(workspace, byok, now, exclude_hold)`: the smallest room left under any of
 * the workspace's budgets (`o_interval`, `o_limit`, `o_room`), counting the per-day counters
 * (`workspace_spend`) of the budget's window and the open holds but `exclude_hold`; no row values
 * when no budget counts the request (none set, or a BYOK request while `include_byok_in_budgets`
 * is off). Locks the workspace's credit account before it reads.
 */
const switchyardBudgetRoom: MoneyFunction = {
  name: "switchyard_budget_room",
  parameters: "p_workspace text, p_byok boolean, p_now timestamptz, p_exclude_hold text, " +
    "OUT o_interval text, OUT o_limit bigint, OUT o_room bigint",
  returns: "",
  declare: `      v_include_byok boolean;
      v_held bigint;
      v_budget record;
      v_spent bigint;
      v_from date;
      v_to date;`,
  statements: budgetRoom,
  body: `
      ${perform(budgetRoom.any)};
      IF NOT FOUND THEN RETURN; END IF;
      ${budgetRoom.includeByok} INTO v_include_byok;
      IF NOT FOUND OR (p_byok AND NOT v_include_byok) THEN RETURN; END IF;
      PERFORM switchyard_lock_account(p_workspace);
      ${budgetRoom.held} INTO v_held;
      FOR v_budget IN ${budgetRoom.budgets} LOOP
        ${windowDays("v_budget.interval")}
        ${budgetRoom.spent} INTO v_spent;
        IF o_room IS NULL OR v_budget.limit_nanos - v_spent - v_held < o_room THEN
          o_interval := v_budget.interval;
          o_limit := v_budget.limit_nanos;
          o_room := v_budget.limit_nanos - v_spent - v_held;
        END IF;
      END LOOP;`
}

// ---------------------------------------------------------------------------------------------

const lease = {
  key: `SELECT k.workspace_id, k.limit_nanos, k.limit_reset, k.include_byok_in_limit, k.disabled, k.deleted_at, k.expires_at
        FROM api_keys k WHERE k.id = p_key FOR NO KEY UPDATE`,
  sweep: `DELETE FROM holds WHERE key_id = p_key AND expires_at <= p_now AND id <> p_id`,
  held: `SELECT h.amount_nanos FROM holds h WHERE h.id = p_id`,
  alive: `INSERT INTO gateway_processes (id, started_at, seen_at) VALUES (p_owner, now(), now())
          ON CONFLICT (id) DO UPDATE SET seen_at = GREATEST(gateway_processes.seen_at, now())`,
  grant: `INSERT INTO holds (id, key_id, workspace_id, amount_nanos, is_byok, created_at, expires_at, owner)
          VALUES (p_id, p_key, p_workspace, v_grant, p_byok, p_now, p_expires, p_owner)
          ON CONFLICT (id) DO UPDATE SET amount_nanos = holds.amount_nanos + EXCLUDED.amount_nanos,
            expires_at = GREATEST(holds.expires_at, EXCLUDED.expires_at)
          RETURNING fence`,
  renew: `UPDATE holds SET expires_at = GREATEST(expires_at, p_expires) WHERE id = p_id RETURNING fence`
}

/**
 * `switchyard_lease(id, owner, key, workspace, byok, need, desired, unit, edge, divisor, now, expires)`:
 * a grant to the spend lease `id` (a hold owned by the gateway process `owner`).
 *
 * **Details**
 *
 * The checks of a reservation — key deleted, disabled, expired, in its workspace; then the key
 * limit, the workspace's budgets and its credits, each counting every hold but this lease, less
 * this lease's amount — then a grant of at least `need`, sized as core's `SpendLease.grantFrom`
 * sizes it: exactly `need` within `edge` of what remains, else the smaller of `desired` and what
 * remains divided by `divisor`, in multiples of `unit` beyond `need`. Expired holds of the key go
 * first. `o_outcome` is `ok` (with `o_granted`, the room left and the lease row's fencing token
 * `o_fence`, `NULL` when no row holds anything) or the refusing scope (with its limit, window and
 * room). A grant is a sign of life: it refreshes the owner's `seen_at`, so no sweep takes the
 * owner's leases for the stale time from then; and it pushes the row's expiry back even when it
 * grants nothing (a renewal).
 */
const switchyardLease: MoneyFunction = {
  name: "switchyard_lease",
  parameters: "p_id text, p_owner text, p_key text, p_workspace text, p_byok boolean, p_need bigint, p_desired bigint, " +
    "p_unit bigint, p_edge bigint, p_divisor bigint, p_now timestamptz, p_expires timestamptz, " +
    "OUT o_outcome text, OUT o_granted text, OUT o_limit text, OUT o_reset text, OUT o_room text, OUT o_fence text",
  returns: "",
  declare: `      v_key record;
      v_held bigint;
      v_avail bigint := 9223372036854775807;
      v_room bigint;
      v_budget record;
      v_target bigint;
      v_grant bigint;
      v_fence bigint;`,
  statements: lease,
  body: `
      ${lease.key} INTO v_key;
      IF NOT FOUND OR v_key.deleted_at IS NOT NULL THEN o_outcome := 'key_deleted'; RETURN; END IF;
      IF v_key.disabled THEN o_outcome := 'key_disabled'; RETURN; END IF;
      IF v_key.expires_at IS NOT NULL AND v_key.expires_at <= p_now THEN o_outcome := 'key_expired'; RETURN; END IF;
      IF v_key.workspace_id <> p_workspace THEN o_outcome := 'wrong_workspace'; RETURN; END IF;
      ${lease.sweep};
      ${lease.held} INTO v_held;
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
      ${lease.alive};
      IF v_grant > 0 THEN
        ${lease.grant} INTO v_fence;
      ELSE
        ${lease.renew} INTO v_fence;
      END IF;
      o_fence := v_fence::text;
      o_outcome := 'ok';
      o_granted := v_grant::text;
      o_room := (v_avail - v_grant)::text;`
}

// ---------------------------------------------------------------------------------------------

const leaseReturn = {
  end: `DELETE FROM holds WHERE id = p_id AND amount_nanos <= p_amount`,
  lower: `UPDATE holds SET amount_nanos = amount_nanos - p_amount WHERE id = p_id`
}

/**
 * `switchyard_lease_return(id, amount)`: hands back `amount` of a lease; the row goes when nothing
 * is left.
 */
const switchyardLeaseReturn: MoneyFunction = {
  name: "switchyard_lease_return",
  parameters: "p_id text, p_amount bigint",
  returns: "RETURNS void",
  declare: "",
  statements: leaseReturn,
  body: `
      ${leaseReturn.end};
      IF NOT FOUND THEN
        ${leaseReturn.lower};
      END IF;`
}

// ---------------------------------------------------------------------------------------------

const flush = {
  keys: `SELECT 1 FROM api_keys WHERE id IN (SELECT DISTINCT e->>'key' FROM jsonb_array_elements(p_rows) e)
        ORDER BY id FOR NO KEY UPDATE`,
  accounts: `SELECT switchyard_lock_account(ws.w) FROM (
          SELECT DISTINCT e->>'workspace' AS w FROM jsonb_array_elements(p_rows) e ORDER BY 1) ws`,
  leases: `SELECT 1 FROM holds WHERE id = ANY (ARRAY(SELECT DISTINCT e->>'lease' FROM jsonb_array_elements(p_rows) e))
        ORDER BY id FOR UPDATE`,
  write: `WITH input AS (
        SELECT * FROM jsonb_to_recordset(p_rows) AS r(generation text, key text, workspace text, model text, provider text,
          prompt_tokens integer, total_tokens integer, cost bigint, byok boolean, created timestamptz, latency_ms integer,
          cached_items integer, cached_tokens integer, lease text, fence bigint, attempts text)
      ), admitted AS (
        SELECT i.* FROM input i
          WHERE i.lease IS NULL OR (SELECT h.fence FROM holds h WHERE h.id = i.lease) = i.fence
      ), written AS (
        INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
            is_byok, created_at, latency_ms, cached_items, cached_tokens, attempts)
          SELECT i.generation, i.key, i.workspace, i.model, i.provider, i.prompt_tokens, i.total_tokens, i.cost, i.byok, i.created,
              i.latency_ms, COALESCE(i.cached_items, 0), COALESCE(i.cached_tokens, 0), i.attempts
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
        UPDATE credit_accounts a
          SET usage_nanos = a.usage_nanos + (SELECT SUM(w.cost_nanos) FROM written w
                WHERE w.workspace_id = a.workspace_id AND NOT w.is_byok AND w.cost_nanos > 0),
              updated_at = (SELECT MAX(w.created_at) FROM written w
                WHERE w.workspace_id = a.workspace_id AND NOT w.is_byok AND w.cost_nanos > 0)
          WHERE a.workspace_id = ANY (ARRAY(SELECT DISTINCT w.workspace_id FROM written w WHERE NOT w.is_byok AND w.cost_nanos > 0))
          RETURNING 1
      ), leases AS (
        UPDATE holds h
          SET amount_nanos = GREATEST(h.amount_nanos - (SELECT SUM(w.cost_nanos) FROM written w
                JOIN input i ON i.generation = w.generation_id WHERE i.lease = h.id), 0),
              expires_at = GREATEST(h.expires_at, p_expires)
          WHERE h.id = ANY (ARRAY(SELECT DISTINCT i.lease FROM written w JOIN input i ON i.generation = w.generation_id
            WHERE i.lease IS NOT NULL))
          RETURNING 1
      )
      SELECT i.generation,
          COALESCE(w.cost_nanos, (SELECT e.cost_nanos FROM ledger e WHERE e.generation_id = i.generation))::text,
          w.generation_id IS NOT NULL OR i.generation = ANY (v_settled),
          NOT EXISTS (SELECT 1 FROM admitted a WHERE a.generation = i.generation)
        FROM input i
        LEFT JOIN written w ON w.generation_id = i.generation`
}

/**
 * The statements of `switchyard_flush` that settle rows whose lease moved, one row (`v_row`, a
 * record) at a time: each reads or writes one row by primary key.
 */
const moved = {
  rows: `SELECT i.* FROM jsonb_to_recordset(p_rows) AS i(generation text, key text, workspace text, model text,
          provider text, prompt_tokens integer, total_tokens integer, cost bigint, byok boolean, created timestamptz, latency_ms integer,
          cached_items integer, cached_tokens integer, lease text, fence bigint, attempts text)
        WHERE i.lease IS NOT NULL AND NOT EXISTS (SELECT 1 FROM holds h WHERE h.id = i.lease AND h.fence = i.fence)
          AND NOT EXISTS (SELECT 1 FROM ledger e WHERE e.generation_id = i.generation)`,
  key: `SELECT k.limit_nanos, k.limit_reset, k.include_byok_in_limit FROM api_keys k WHERE k.id = v_row.key`,
  settle: `WITH written AS (
        INSERT INTO ledger (generation_id, key_id, workspace_id, model, provider, prompt_tokens, total_tokens, cost_nanos,
            is_byok, created_at, latency_ms, cached_items, cached_tokens, attempts)
          VALUES (v_row.generation, v_row.key, v_row.workspace, v_row.model, v_row.provider, v_row.prompt_tokens, v_row.total_tokens,
            v_row.cost, v_row.byok, v_row.created, v_row.latency_ms, COALESCE(v_row.cached_items, 0), COALESCE(v_row.cached_tokens, 0),
            v_row.attempts)
          ON CONFLICT (generation_id) DO NOTHING
          RETURNING cost_nanos
      ), days AS (
        SELECT d.day FROM written w CROSS JOIN LATERAL (VALUES ((v_row.created AT TIME ZONE 'UTC')::date), ('-infinity'::date)) AS d(day)
          WHERE w.cost_nanos > 0
      ), key_days AS (
        INSERT INTO key_spend AS s (key_id, day, spent_nanos, byok_nanos)
          SELECT v_row.key, d.day, CASE WHEN v_row.byok THEN 0 ELSE v_row.cost END, CASE WHEN v_row.byok THEN v_row.cost ELSE 0 END
            FROM days d
          ON CONFLICT (key_id, day) DO UPDATE
            SET spent_nanos = s.spent_nanos + EXCLUDED.spent_nanos, byok_nanos = s.byok_nanos + EXCLUDED.byok_nanos
          RETURNING 1
      ), workspace_days AS (
        INSERT INTO workspace_spend AS s (workspace_id, day, spent_nanos, byok_nanos)
          SELECT v_row.workspace, d.day, CASE WHEN v_row.byok THEN 0 ELSE v_row.cost END, CASE WHEN v_row.byok THEN v_row.cost ELSE 0 END
            FROM days d
          ON CONFLICT (workspace_id, day) DO UPDATE
            SET spent_nanos = s.spent_nanos + EXCLUDED.spent_nanos, byok_nanos = s.byok_nanos + EXCLUDED.byok_nanos
          RETURNING 1
      )
      UPDATE credit_accounts a SET usage_nanos = a.usage_nanos + w.cost_nanos, updated_at = v_row.created
        FROM written w WHERE a.workspace_id = v_row.workspace AND NOT v_row.byok AND w.cost_nanos > 0`,
}

/**
 * `switchyard_flush(rows, expires)`: many ledger rows in one statement.
 *
 * **Details**
 *
 * Rows already written (the same generation id) are left as they are and answered with their cost
 * (`o_written` false). For the rows written, the per-day and all-time spend counters of each key and
 * workspace, the workspace's usage (non-BYOK) and each lease's amount move by the same sums, in the
 * same transaction, so what a limit counts never changes; each lease used lives until at least
 * `expires`. Keys, then credit accounts, then the leases' rows are locked in sorted order first
 * (a sweep, `SKIP LOCKED`, leaves a locked lease to this write). Fencing: each row carries the
 * `fence` of its lease, and a row whose lease is gone or has another token is not written: it is
 * answered `o_fenced` (with the cost of a row already written under that generation id, if any).
 * The cost of a row written before is read by its primary key: with a join, the planner would
 * read the whole ledger. A row's `attempts` (JSON text, `0014_generation_attempts`) is copied to
 * `ledger.attempts` as it comes: nothing here reads it.
 */
export const switchyardFlush: MoneyFunction = {
  name: "switchyard_flush",
  parameters: "p_rows jsonb, p_expires timestamptz",
  returns: "RETURNS TABLE (o_generation text, o_cost text, o_written boolean, o_fenced boolean)",
  declare: `      v_row record;
      v_key record;
      v_budget record;
      v_fits boolean;
      v_settled text[] := '{}';`,
  statements: flush,
  body: `
      ${perform(flush.keys)};
      ${perform(flush.accounts)};
      ${perform(flush.leases)};
      FOR v_row IN ${moved.rows} LOOP
        v_fits := true;
        IF v_row.cost > 0 THEN
          ${moved.key} INTO v_key;
          IF FOUND AND v_key.limit_nanos IS NOT NULL AND (NOT v_row.byok OR v_key.include_byok_in_limit) THEN
            v_fits := v_row.cost <= switchyard_key_room(v_row.key, v_key.limit_nanos, v_key.limit_reset,
              v_key.include_byok_in_limit, now(), '');
          END IF;
          SELECT * INTO v_budget FROM switchyard_budget_room(v_row.workspace, v_row.byok, now(), '');
          IF v_budget.o_room IS NOT NULL AND v_row.cost > v_budget.o_room THEN v_fits := false; END IF;
          IF NOT v_row.byok AND v_row.cost > switchyard_balance_room(v_row.workspace, now(), '') THEN v_fits := false; END IF;
        END IF;
        IF v_fits THEN
          ${moved.settle};
          v_settled := v_settled || v_row.generation;
        END IF;
      END LOOP;
      RETURN QUERY ${flush.write};`
}

// ---------------------------------------------------------------------------------------------

/** Every function the gateway's money SQL defines, parts before the functions that call them. */
export const all: ReadonlyArray<MoneyFunction> = [
  switchyardLockAccount,
  switchyardKeyRoom,
  switchyardBalanceRoom,
  switchyardBudgetRoom,
  switchyardLease,
  switchyardLeaseReturn,
  switchyardFlush
]

/** Functions of earlier versions that nothing calls any more (dropped by `0011_money_functions`). */
export const retired: ReadonlyArray<string> = [
  "switchyard_batch",
  "switchyard_record",
  "switchyard_reserve",
  "switchyard_admit",
  "switchyard_settle"
]

/** Creates or replaces every function with its current definition. */
const apply: Effect.Effect<void, unknown, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const f of all) yield* sql.unsafe(definition(f))
})

/**
 * Drops every money function, current or retired, in whatever signature an earlier version
 * created it (by name: each exists in one signature), then creates each from its current
 * definition: a signature may change from one version to the next, which `CREATE OR REPLACE`
 * cannot do. Runs after migrations (`Migrations.migrate`), in one transaction.
 */
export const replace: Effect.Effect<void, unknown, SqlClient.SqlClient> = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const name of [...all.map((f) => f.name), ...retired]) yield* sql.unsafe(`DROP FUNCTION IF EXISTS ${name}`)
  yield* apply
})
