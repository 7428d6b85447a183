import type { CreditsResponse } from "@switchyard/core/schema/Credits"
import * as Format from "./Format.ts"

type Credits = CreditsResponse["data"]

/**
 * Whether a workspace has prepaid credits: they are opt-in, turned on by the first credits
 * added, and amounts added are always positive, so a workspace without any has none to spend
 * down and its balance limits nothing.
 */
const prepaid = (credits: Credits): boolean => credits.total_credits > 0

/**
 * What the console shows for a workspace's credits: the balance left when it has prepaid
 * credits, "off" when it has none.
 */
export const left = (credits: Credits | undefined): { readonly value: string; readonly hint: string } =>
  credits === undefined
    ? { value: "-", hint: "" }
    : prepaid(credits)
    ? { value: Format.money(credits.total_credits - credits.total_usage), hint: `of ${Format.money(credits.total_credits)} added` }
    : { value: "off", hint: "no prepaid credits: spend is recorded, not limited by a balance" }

/**
 * What stops a workspace without budgets from spending.
 */
export const withoutBudgets = (credits: Credits | undefined): string =>
  credits !== undefined && prepaid(credits)
    ? "No budgets: this workspace may spend until its credits run out."
    : "No budgets and no prepaid credits: only its keys' limits stop this workspace's spending."
