import { Effect, References, type Tracer } from "effect"

/**
 * The spans opened on every request, free when tracing is off.
 *
 * **Details**
 *
 * With tracing off (`TracerEnabled` false: no OTLP endpoint), `Effect.withSpan` and
 * `Effect.fn("name")` still build a no-op span, register its end, provide it as the parent and,
 * unless told not to, take a call-site stack on every call. These helpers look at
 * `TracerEnabled` first and, when it is off, run the effect as it is: no span, no stack, no
 * context change, and the span's attributes are never computed. With tracing on, the span's name
 * and attributes say where it comes from, so no call-site stack is taken either.
 */
export const perRequest = { captureStackTrace: false } as const

/**
 * `Effect.withSpan(name)` when tracing is on; the effect itself when it is off. `attributes` is
 * called only when the span is made.
 */
export const within = (name: string, attributes?: () => Record<string, unknown>) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(References.TracerEnabled)
      ? Effect.withSpan(self, name, {
        ...(attributes === undefined ? {} : { attributes: attributes() }),
        ...perRequest
      } satisfies Tracer.SpanOptions) as Effect.Effect<A, E, R>
      : self
  )

/**
 * Annotates the current span when tracing is on; the attributes are computed only then.
 */
export const annotate = (attributes: () => Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => fiber.getRef(References.TracerEnabled) ? Effect.annotateCurrentSpan(attributes()) : Effect.void)
