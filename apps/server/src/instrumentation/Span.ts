import { Cause, Clock, Context, Effect, Exit, Option, References, Tracer } from "effect"

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
 * called only when the span is made. `root`: background work that declares itself a trace of its
 * own (a batch's lines), which `Tracing.declaredRootsOnly` exports.
 */
export const within = (name: string, attributes?: () => Record<string, unknown>, options?: { readonly root?: boolean }) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) =>
    fiber.getRef(References.TracerEnabled)
      ? Effect.withSpan(self, name, {
        ...(attributes === undefined ? {} : { attributes: attributes() }),
        ...(options?.root === true ? { root: true } : {}),
        ...perRequest
      } satisfies Tracer.SpanOptions) as Effect.Effect<A, E, R>
      : self
  )

/**
 * Annotates the current span when tracing is on; the attributes are computed only then.
 */
export const annotate = (attributes: () => Record<string, unknown>): Effect.Effect<void> =>
  Effect.withFiber((fiber) => fiber.getRef(References.TracerEnabled) ? Effect.annotateCurrentSpan(attributes()) : Effect.void)

/**
 * A background run (a retention prune, a store upkeep step) as one root span, exported only when
 * the run did something: `report` gives the span's attributes from the run's result, or
 * `undefined` for an idle run, which leaves no span. A failed run is always reported, with its
 * failure as the span's error. The run's own statements are not under it (they were made before
 * it was known whether the run would be worth a span; `Tracing.declaredRootsOnly` drops them).
 */
export const job = <A>(name: string, report: (result: A) => Record<string, unknown> | undefined) =>
<E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.withFiber((fiber) => {
    if (!fiber.getRef(References.TracerEnabled)) return self
    const clock = fiber.getRef(Clock.Clock)
    const startTime = clock.currentTimeNanosUnsafe()
    return Effect.onExit(self, (exit) =>
      Effect.sync(() => {
        if (Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)) return
        const attributes = Exit.isSuccess(exit) ? report(exit.value) : {}
        if (attributes === undefined) return
        const span = fiber.getRef(Tracer.Tracer).span({
          name,
          parent: Option.none(),
          annotations: Context.empty(),
          links: [],
          startTime,
          kind: "internal",
          root: true,
          sampled: true
        })
        for (const [key, value] of Object.entries(attributes)) span.attribute(key, value)
        span.end(clock.currentTimeNanosUnsafe(), exit)
      }))
  })
