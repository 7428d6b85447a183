/**
 * The console's sign-in by single sign-on, beside `/ui/`: `GET /ui/auth/login` (to the IdP),
 * `GET /ui/auth/callback` (back from it: a session and its cookie), `POST /ui/auth/logout` (the
 * session ends here, then at the IdP's `end_session_endpoint` when it has one), and the public
 * `GET /ui/auth/options` (which sign-in the console offers). A refused sign-in is a page that says
 * why, and an audit entry (`session.refuse`).
 */
import { type Duration, Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { cookieName, lastsFor, type SignInRefused, SingleSignOn, signInFor, stateCookieName } from "./SingleSignOn.ts"

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const securityHeaders = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

/** The page of a refused sign-in: the reason, and a way back. */
const refusalPage = (refusal: SignInRefused) =>
  HttpServerResponse.text(
    `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in refused · Switchyard</title></head>
<body><main><h1>Sign-in refused</h1><p id="reason">${escapeHtml(refusal.reason)}</p>
<p><a href="/ui/auth/login">Sign in again</a></p></main></body></html>`,
    { status: refusal.status, headers: securityHeaders, contentType: "text/html; charset=utf-8" }
  )

const fail = (sso: SingleSignOn["Service"], refusal: SignInRefused) =>
  Effect.gen(function*() {
    yield* sso.refused(refusal).pipe(Effect.orElseSucceed(() => undefined))
    yield* Effect.logInfo("sso: sign-in refused").pipe(Effect.annotateLogs({ reason: refusal.reason }))
    return refusalPage(refusal)
  })

const cookieOptions = (secure: boolean, maxAge: Duration.Input, path = "/") => ({
  httpOnly: true,
  secure,
  sameSite: "lax" as const,
  path,
  maxAge
})

/** A store that cannot answer: a 503 page, as the API answers it. */
const unavailable = <R>(route: Effect.Effect<HttpServerResponse.HttpServerResponse, unknown, R>) =>
  route.pipe(Effect.catch((error) =>
    Effect.succeed(HttpServerResponse.jsonUnsafe({
      error: { code: 503, message: (error as { message?: string }).message ?? "The store is unavailable" }
    }, { status: 503 }))
  ))

export const layer = Layer.unwrap(Effect.gen(function*() {
  const sso = yield* SingleSignOn
  return Layer.mergeAll(
    HttpRouter.add("GET", "/ui/auth/options", Effect.sync(() => {
      const configured = sso.settings !== undefined
      return HttpServerResponse.jsonUnsafe(
        { sso: configured, key: !configured || sso.settings.sso.key_sign_in, login_url: configured ? "/ui/auth/login" : null },
        { headers: { "cache-control": "no-store" } }
      )
    })),
    HttpRouter.add("GET", "/ui/auth/login", unavailable(Effect.gen(function*() {
      const started = yield* Effect.result(sso.begin)
      if (started._tag === "Failure") {
        if (started.failure._tag === "SignInRefused") return yield* fail(sso, started.failure)
        return yield* Effect.fail(started.failure)
      }
      const secure = sso.settings?.publicUrl.protocol === "https:"
      return yield* HttpServerResponse.redirect(started.success.url.toString(), { status: 302, headers: securityHeaders }).pipe(
        HttpServerResponse.setCookie(stateCookieName, started.success.state, cookieOptions(secure, signInFor, "/ui/auth/"))
      )
    }))),
    HttpRouter.add("GET", "/ui/auth/callback", unavailable(Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const settings = sso.settings
      const query = request.url.includes("?") ? request.url.slice(request.url.indexOf("?")) : ""
      const callbackUrl = new URL(`/ui/auth/callback${query}`, settings?.publicUrl ?? "http://127.0.0.1")
      const done = yield* Effect.result(sso.complete(callbackUrl, request.cookies[stateCookieName]))
      if (done._tag === "Failure") {
        if (done.failure._tag === "SignInRefused") return yield* fail(sso, done.failure)
        return yield* Effect.fail(done.failure)
      }
      const secure = settings?.publicUrl.protocol === "https:"
      return yield* HttpServerResponse.redirect("/ui/", { status: 303, headers: securityHeaders }).pipe(
        HttpServerResponse.setCookie(cookieName, Redacted.value(done.success.token), cookieOptions(secure, lastsFor)),
        Effect.flatMap(HttpServerResponse.expireCookie(stateCookieName, { path: "/ui/auth/" }))
      )
    }))),
    HttpRouter.add("POST", "/ui/auth/logout", unavailable(Effect.gen(function*() {
      const request = yield* HttpServerRequest.HttpServerRequest
      const origin = request.headers.origin
      // A cross-site form cannot end someone's session (SameSite=Lax keeps the cookie off it too).
      if (origin !== undefined && sso.settings !== undefined && origin !== sso.settings.publicUrl.origin) {
        return HttpServerResponse.jsonUnsafe({ error: { code: 403, message: "Cross-site sign-out refused: the Origin is not this gateway's public URL" } }, { status: 403 })
      }
      const to = yield* sso.signOut(request.cookies[cookieName])
      // The console signs out by `fetch` (a form's redirect to the IdP would break its
      // `form-action 'self'`): it asks for JSON and goes to `redirect_to` itself.
      const wantsJson = (request.headers.accept ?? "").includes("application/json")
      const answer = wantsJson
        ? HttpServerResponse.jsonUnsafe({ redirect_to: to }, { headers: { ...securityHeaders, "cache-control": "no-store" } })
        : HttpServerResponse.redirect(to, { status: 303, headers: securityHeaders })
      return yield* HttpServerResponse.expireCookie(answer, cookieName, { path: "/" })
    })))
  )
}))
