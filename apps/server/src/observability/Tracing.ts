import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Config, Duration, Effect, Layer, Option, References, Tracer } from "effect"
import { Headers, HttpMiddleware } from "effect/http"
import { OtlpExporter, OtlpSerialization, OtlpTracer } from "effect/observability"
import { redactedHeaders } from "../providers/UpstreamHttp.ts"
import * as RouteTemplates from "./RouteTemplates.ts"

/**
 * OpenTelemetry's standard variables for trace export over OTLP/HTTP.
 */
export const TracingConfig = Config.all({
  disabled: Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false)),
  tracesEndpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")),
  endpoint: Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT")),
  tracesProtocol: Config.option(Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")),
  protocol: Config.option(Config.Literals(["http/protobuf", "http/json"], "OTEL_EXPORTER_OTLP_PROTOCOL")),
  tracesHeaders: Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_HEADERS")),
  headers: Config.option(Config.String("OTEL_EXPORTER_OTLP_HEADERS")),
  serviceName: Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("switchyard")),
  scheduleDelayMs: Config.Int("OTEL_BSP_SCHEDULE_DELAY").pipe(Config.withDefault(5000))
})

/**
 * Requests that are not traced: health checks, metric scrapes and the console's files, which
 * would fill a trace store with spans nobody reads.
 */
const untraced = (url: string): boolean => {
  const query = url.indexOf("?")
  const path = query === -1 ? url : url.slice(0, query)
  return path === "/api/v1/health" || path === "/livez" || path === "/metrics" || path === "/ui" || path.startsWith("/ui/")
}

const blank = (text: Option.Option<string>) => Option.filter(text, (t) => t.trim().length > 0)

/**
 * Where traces go: `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` as given, else `/v1/traces` below
 * `OTEL_EXPORTER_OTLP_ENDPOINT`, as the OpenTelemetry specification says.
 */
export const tracesUrl = (config: { readonly tracesEndpoint: Option.Option<string>; readonly endpoint: Option.Option<string> }) => {
  const signal = blank(config.tracesEndpoint)
  if (Option.isSome(signal)) return Option.some(signal.value.trim())
  return Option.map(blank(config.endpoint), (base) => `${base.trim().replace(/\/+$/u, "")}/v1/traces`)
}

// `key=value,key2=value2`, values percent-encoded (the specification's format).
const parseHeaders = (text: string): Record<string, string> =>
  Object.fromEntries(
    text.split(",").flatMap((pair) => {
      const at = pair.indexOf("=")
      if (at <= 0) return []
      return [[decodeURIComponent(pair.slice(0, at).trim()), decodeURIComponent(pair.slice(at + 1).trim())]]
    })
  )

/**
 * The spans a trace store receives: a request's (its server span and everything under it), and
 * background work that declared itself a root (`root: true`: a ledger flush, `Span.job`'s runs).
 * A span with no parent that did not (the SQL of a health probe, a heartbeat, a start-up
 * migration, an idle upkeep look) is not sampled, and neither is anything under it: an operator's
 * trace store holds no orphan single-statement roots.
 */
export const declaredRootsOnly = (inner: Tracer.Tracer): Tracer.Tracer =>
  Tracer.make({
    span: (options) =>
      inner.span(
        Option.isNone(options.parent) && !options.root && options.kind !== "server" ? { ...options, sampled: false } : options
      ),
    ...(inner.context === undefined ? {} : { context: inner.context })
  })

/**
 * Tracing as configured: with an OTLP endpoint, every request's spans (the server span, the route
 * plan, each upstream attempt and the HTTP call under it, each ledger step, broadcast deliveries)
 * but those of {@link untraced} requests, the ledger's flushes and the background runs that did
 * something ({@link declaredRootsOnly}), are exported in batches and W3C `traceparent` goes out
 * with upstream calls and webhooks. Without
 * one, spans are not even built (`TracerEnabled` off: they cost about a third of a request's CPU)
 * and nothing is propagated.
 */
export const layer = Layer.unwrap(Effect.gen(function*() {
  const config = yield* TracingConfig
  const url = tracesUrl(config)
  if (config.disabled || Option.isNone(url)) {
    return Layer.mergeAll(
      Layer.succeed(References.TracerEnabled, false),
      Layer.succeed(Tracer.DisablePropagation, true)
    )
  }
  const routes = RouteTemplates.make()
  const protocol = Option.getOrElse(Option.orElse(config.tracesProtocol, () => config.protocol), () => "http/protobuf")
  const headers = Option.orElse(blank(config.tracesHeaders), () => blank(config.headers))
  const serialization = protocol === "http/json"
    ? OtlpSerialization.layerJson
    : OtlpSerialization.layerProtobuf
  return Layer.mergeAll(
    Layer.effect(
      Tracer.Tracer,
      Effect.map(
        OtlpTracer.make({
          url: url.value,
          resource: { serviceName: config.serviceName },
          headers: Option.match(headers, { onNone: () => undefined, onSome: parseHeaders }),
          exportInterval: Duration.millis(config.scheduleDelayMs)
        }),
        declaredRootsOnly
      )
    ).pipe(Layer.provideMerge(OtlpExporter.layerFlusher), Layer.provide([serialization, NodeHttpClient.layerUndici])),
    Layer.succeed(HttpMiddleware.SpanNameGenerator, (request) => `${request.method} ${routes.of(request.method, request.url)}`),
    Layer.succeed(HttpMiddleware.TracerDisabledWhen, (request) => untraced(request.url)),
    Layer.succeed(Headers.CurrentRedactedNames, redactedHeaders)
  )
}))
