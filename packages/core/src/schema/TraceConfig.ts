/**
 * The `trace` field of a request: observability metadata.
 *
 * **Details**
 *
 * `trace_id`, `trace_name`, `span_name`, `generation_name` and `parent_span_id` are strings
 * with special handling (they name the trace and span a request is recorded under). Every
 * other key is kept as it came, with any JSON value, and passed on as custom metadata to the
 * configured broadcast destinations.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * The keys of {@link TraceConfig} that have special handling.
 *
 * @since 0.1.0
 */
export const knownKeys = ["trace_id", "trace_name", "span_name", "generation_name", "parent_span_id"] as const

/**
 * The `trace` object: five optional strings plus any other key with any JSON value.
 *
 * @since 0.1.0
 */
export const TraceConfig = Schema.StructWithRest(
  Schema.Struct({
    trace_id: Schema.optionalKey(Schema.String),
    trace_name: Schema.optionalKey(Schema.String),
    span_name: Schema.optionalKey(Schema.String),
    generation_name: Schema.optionalKey(Schema.String),
    parent_span_id: Schema.optionalKey(Schema.String)
  }),
  [Schema.Record(Schema.String, Schema.Json)]
).annotate({ identifier: "TraceConfig" })

/**
 * @since 0.1.0
 */
export type TraceConfig = typeof TraceConfig.Type

/**
 * The custom metadata of a trace: every key other than {@link knownKeys}.
 *
 * @since 0.1.0
 */
export const customMetadata = (trace: TraceConfig): { readonly [key: string]: Schema.Json } => {
  const out: Record<string, Schema.Json> = {}
  for (const [key, value] of Object.entries(trace)) {
    if (!(knownKeys as ReadonlyArray<string>).includes(key)) out[key] = value
  }
  return out
}
