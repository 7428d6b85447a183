/**
 * Options for the spans opened on every request. They capture no call-site stack. With tracing
 * off, a span is never built, yet `Effect.withSpan` would still take a stack for it on each call
 * (about 2 % of a request's CPU in `pnpm bench --profile`). With tracing on, the span's name and
 * attributes say where it comes from.
 */
export const perRequest = { captureStackTrace: false } as const
