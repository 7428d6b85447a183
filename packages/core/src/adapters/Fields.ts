/**
 * Config fields more than one adapter's module declares: the self-hosted servers' (`base_urls`,
 * replicas of one server listed as one provider, instead of `base_url`; `health_interval_s`, how
 * often each replica's health route is probed, default 5; discovery: `discover`, serve every
 * model the server lists; `discover_interval_s`, how often it is asked, default 60; `models`,
 * public ids for server ids, default `<slug>/<server id>`).
 *
 * @since 0.13.0
 */
import { Schema } from "effect"

/**
 * @since 0.13.0
 */
export const HttpUrl = Schema.String.check(Schema.isPattern(/^https?:\/\/\S+$/u, { expected: "an http(s) URL" }))

/**
 * @since 0.13.0
 */
export const NonEmptyString = Schema.String.check(Schema.isMinLength(1))

/**
 * Seconds between two health probes of a replica when the provider names none.
 *
 * @since 0.10.0
 */
export const defaultHealthIntervalS = 5

/**
 * Seconds between two listings of a discovering provider's models when it names none.
 *
 * @since 0.11.0
 */
export const defaultDiscoverIntervalS = 60

/**
 * @since 0.10.0
 */
export const SelfHostedFields = Schema.Struct({
  base_urls: Schema.optionalKey(Schema.Array(HttpUrl).check(Schema.isMinLength(1))),
  health_interval_s: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 3600 }))),
  discover: Schema.optionalKey(Schema.Boolean),
  discover_interval_s: Schema.optionalKey(Schema.Int.check(Schema.isBetween({ minimum: 1, maximum: 86_400 }))),
  models: Schema.optionalKey(Schema.Record(
    Schema.String,
    Schema.String.check(Schema.isPattern(/^[^/\s]+\/\S+$/u, { expected: "a model slug of the form <vendor>/<model_name>" }))
  ))
})
