import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as NodePath from "node:path"
import * as Fs from "node:fs"
import type { Page } from "playwright-core"
import * as Accessibility from "./Accessibility.ts"
import { CookieJar, signIn as signInOverHttp } from "../../server/test/support/IdentityProvider.ts"
import * as Browser from "./Browser.ts"
import * as SsoGateway from "./SsoGateway.ts"

type Person = (typeof SsoGateway.people)[keyof typeof SsoGateway.people]

describe("the web console signed in by single sign-on, in Chromium, through a real OpenID provider", () => {
  let gateway: SsoGateway.SsoGateway
  let browser: Browser.Browser
  let page: Page
  const consoleErrors: Array<string> = []
  // Every answer of the gateway's API that refused the one signed in (a 403 is a button the role should not have had).
  const refused: Array<string> = []
  const refusedAll: Array<string> = []
  const failed: Array<string> = []
  const accessibility: Record<string, ReadonlyArray<string>> = {}

  const shoot = async (name: string) => {
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== "running"))
    await page.mouse.move(0, 0)
    await page.screenshot({ path: NodePath.join(Browser.screenshotDir, `sso-${name}.png`), fullPage: true })
    accessibility[name] = await Accessibility.violations(page)
  }

  const navigation = () => page.getByRole("navigation", { name: "Console pages" })

  const open = async (label: string) => {
    await navigation().getByRole("link", { name: label, exact: true }).click()
    await page.getByRole("heading", { level: 1, name: label }).waitFor()
    // What the page loads has come back: nothing is busy any more.
    await page.waitForFunction(() => document.querySelectorAll("[aria-busy=true], .mantine-Loader-root").length === 0)
  }

  /** No call of the page was refused: a role never sees an error notice for what it may not do. */
  const noRefusal = async (where: string) => {
    await page.waitForLoadState("networkidle")
    const alerts = await page.getByRole("alert").allInnerTexts()
    assert.deepStrictEqual(alerts, [], `${where}: ${alerts.join(" | ")} (refused: ${refused.join(", ")})`)
    assert.deepStrictEqual(refused, [], where)
  }

  /** Through the gateway's sign-in page and the identity provider's own login page, back to the console. */
  const signInAtIdp = async (who: Person) => {
    refused.length = 0
    await browser.context.clearCookies()
    await page.goto(`${gateway.origin}/ui/`)
    const sso = page.getByRole("link", { name: "Sign in with single sign-on" })
    await sso.waitFor()
    // With the identity provider configured and `key_sign_in: false`, no key form.
    assert.strictEqual(await page.getByLabel("API key").count(), 0)
    await sso.click()
    await page.waitForURL((url) => url.origin === gateway.idp.issuer)
    await page.getByLabel("Login").fill(who.email)
    await page.getByLabel("Password").fill(who.password)
    await page.getByRole("button", { name: "Sign in" }).click()
  }

  const signedInAs = async (who: Person, role: string) => {
    await page.waitForURL((url) => url.origin === gateway.origin)
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    assert.strictEqual(await page.getByLabel("Signed in as").innerText(), who.name)
    assert.strictEqual((await page.getByLabel("Role").innerText()).toLowerCase(), role)
  }

  const pagesShown = async () => navigation().getByRole("link").allInnerTexts()

  /** No secret of the sign-in in what the page holds: cookie, client secret, tokens. */
  const noSecretsInPage = async (where: string) => {
    const cookies = await browser.context.cookies(gateway.origin)
    const session = cookies.find((cookie) => cookie.name === "switchyard_session")
    assert.isDefined(session, `${where}: no session cookie`)
    assert.isTrue(session!.httpOnly, "the session cookie is HttpOnly")
    assert.strictEqual(session!.sameSite, "Lax")
    const html = await page.content()
    const stored = await page.evaluate(() => JSON.stringify({ cookie: document.cookie, session: { ...sessionStorage }, local: { ...localStorage } }))
    for (const [name, value] of [["session cookie", session!.value], ["client secret", gateway.clientSecret]] as const) {
      assert.notInclude(html, value, `${where}: the ${name} is in the page`)
      assert.notInclude(stored, value, `${where}: the ${name} is readable by the page`)
    }
    // No JSON Web Token (an ID, access or refresh token) anywhere in the page or its storage.
    for (const text of [html, stored]) assert.notMatch(text, /eyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]+/u, `${where}: a token is in the page`)
    assert.notInclude(stored, "sk-sy-v1-", `${where}: a key is kept in the browser`)
  }

  const signOut = async () => {
    await page.getByRole("button", { name: "Sign out" }).click()
    // The gateway ends the session, then sends the browser to the IdP's sign-out, which asks and
    // comes back to the console.
    await page.waitForURL((url) => url.origin !== gateway.origin)
    await page.getByRole("button", { name: "Yes, sign me out" }).click()
    await page.waitForURL((url) => url.origin === gateway.origin && url.pathname.startsWith("/ui"))
    await page.getByRole("link", { name: "Sign in with single sign-on" }).waitFor()
    const cookies = await browser.context.cookies(gateway.origin)
    assert.isUndefined(cookies.find((cookie) => cookie.name === "switchyard_session"), "the session cookie outlives sign-out")
  }

  beforeAll(async () => {
    Fs.mkdirSync(Browser.screenshotDir, { recursive: true })
    gateway = await SsoGateway.start()
    browser = await Browser.launch()
    page = await browser.context.newPage()
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(`${message.text()} (${message.location().url})`)
    })
    page.on("pageerror", (error) => consoleErrors.push(String(error)))
    page.on("response", (response) => {
      const url = new URL(response.url())
      const line = `${response.status()} ${response.request().method()} ${url.origin === gateway.origin ? "" : url.origin}${url.pathname}`
      if (response.status() >= 400) failed.push(line)
      if (response.status() === 403 && url.pathname.startsWith("/api/")) {
        refused.push(line)
        refusedAll.push(line)
      }
    })
  })

  afterAll(async () => {
    await browser?.close()
    await gateway?.close()
  })

  it("shows an instance admin every page, providers' and keys' actions, and the sessions of people", async () => {
    await signInAtIdp(SsoGateway.people.admin)
    await signedInAs(SsoGateway.people.admin, "instance admin")
    assert.deepStrictEqual(await pagesShown(), ["Overview", "Keys", "Workspaces and budgets", "Providers", "Batches", "Interns", "Audit", "Sessions"])
    await noSecretsInPage("admin")
    await shoot("admin-overview")
    await noRefusal("admin overview")
    await open("Providers")
    await page.getByRole("button", { name: "Add provider" }).waitFor()
    await page.getByRole("button", { name: "Test Alpha Cloud" }).waitFor()
    await noRefusal("admin providers")
    await open("Keys")
    await page.getByRole("button", { name: "Create key" }).waitFor()
    await open("Workspaces and budgets")
    assert.isAbove(await page.getByRole("button", { name: "Set budget" }).count(), 0)
    await noRefusal("admin workspaces")
    await open("Audit")
    await noRefusal("admin audit")
    await open("Sessions")
    const mine = page.getByRole("region", { name: "Sessions" }).getByRole("row").filter({ hasText: SsoGateway.people.admin.email })
    await mine.first().waitFor()
    await page.getByRole("button", { name: `End all sessions of ${SsoGateway.people.admin.name}` }).waitFor()
    // The viewer signs in elsewhere (over HTTP, with a cookie jar of their own); the admin ends
    // their sessions from this page, and the viewer's next call is refused.
    const viewer = SsoGateway.people.viewer
    const jar = new CookieJar()
    await signInOverHttp(jar, `${gateway.origin}/ui/auth/login`, { login: viewer.email, password: viewer.password })
    const viewerCalls = () => fetch(`${gateway.origin}/api/v1/me`, { headers: { cookie: jar.header(gateway.origin) } }).then((answer) => answer.status)
    assert.strictEqual(await viewerCalls(), 200)
    await page.getByRole("button", { name: "Refresh" }).click()
    const endViewer = page.getByRole("button", { name: `End all sessions of ${viewer.name}` })
    await endViewer.first().click()
    await endViewer.first().waitFor({ state: "detached" })
    assert.strictEqual(await viewerCalls(), 401)
    await shoot("admin-sessions")
    await noRefusal("admin sessions")
    // The audit log names the person who ended them.
    await open("Audit")
    await page.getByRole("row").filter({ hasText: "session.delete" }).filter({ hasText: SsoGateway.people.admin.name }).first().waitFor()
    await signOut()
  })

  it("shows a viewer activity, money, providers' health and the audit log, with no button that changes anything", async () => {
    await signInAtIdp(SsoGateway.people.viewer)
    await signedInAs(SsoGateway.people.viewer, "viewer")
    assert.deepStrictEqual(await pagesShown(), ["Overview", "Workspaces and budgets", "Providers", "Batches", "Audit"])
    await noSecretsInPage("viewer")
    await noRefusal("viewer overview")
    await shoot("viewer-overview")
    await open("Providers")
    const providersTable = page.getByRole("region", { name: "Providers", exact: true })
    await providersTable.getByRole("columnheader", { name: "Health" }).waitFor()
    for (const action of ["Add provider", "Test Alpha Cloud", "Manage Alpha Cloud"]) {
      assert.strictEqual(await page.getByRole("button", { name: action }).count(), 0, `a viewer sees ${action}`)
    }
    await noRefusal("viewer providers")
    await open("Workspaces and budgets")
    await page.getByRole("heading", { name: "Search" }).waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Set budget" }).count(), 0)
    assert.isTrue(await page.getByLabel("Embeddings cache of Search").isDisabled())
    await noRefusal("viewer workspaces")
    await open("Audit")
    await noRefusal("viewer audit")
    await shoot("viewer-audit")
    await open("Batches")
    await noRefusal("viewer batches")
    // A page the role does not have is not reachable by its address either.
    await page.goto(`${gateway.origin}/ui/keys`)
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await signOut()
  })

  it("shows a workspace member their workspace, and lets them manage only the keys they created", async () => {
    await signInAtIdp(SsoGateway.people.member)
    await signedInAs(SsoGateway.people.member, "workspace member")
    assert.deepStrictEqual(await pagesShown(), ["Overview", "Keys", "Workspaces and budgets"])
    await noSecretsInPage("member")
    await noRefusal("member overview")
    await open("Keys")
    // The key someone else created in the workspace is not theirs to change (the gateway may not even list it).
    assert.strictEqual(await page.getByRole("button", { name: "Edit limits of search-shared" }).count(), 0)
    await page.getByRole("button", { name: "Create key" }).click()
    const dialog = page.getByRole("dialog", { name: "Create a key" })
    await dialog.getByLabel("Name").fill("mia-notebook")
    await dialog.getByRole("button", { name: "Create key" }).click()
    const secret = page.getByLabel("New key secret")
    await secret.waitFor()
    await page.getByRole("button", { name: "Done" }).click()
    await page.getByRole("dialog").waitFor({ state: "detached" })
    await page.getByRole("button", { name: "Edit limits of mia-notebook" }).waitFor()
    await page.getByRole("button", { name: "Disable mia-notebook" }).waitFor()
    assert.strictEqual(await page.getByRole("button", { name: "Edit limits of search-shared" }).count(), 0)
    await noRefusal("member keys")
    await shoot("member-keys")
    const { data: keys } = await gateway.admin.keys.list({ query: { workspace_id: gateway.searchWorkspaceId } })
    assert.include(keys.map((key) => key.name), "mia-notebook")
    await open("Workspaces and budgets")
    const cards = await page.locator("main section h2").allInnerTexts()
    assert.deepStrictEqual(cards, ["Search"])
    assert.strictEqual(await page.getByRole("button", { name: "Set budget" }).count(), 0)
    await noRefusal("member workspaces")
    await signOut()
  })

  it("refuses a person in no mapped group, saying why, and gives them no session", async () => {
    await signInAtIdp(SsoGateway.people.nobody)
    await page.waitForURL((url) => url.origin === gateway.origin)
    await page.waitForLoadState("load")
    const text = await page.locator("body").innerText()
    assert.match(text, /no group that has a role here/u, text)
    assert.notInclude(text, "Overview")
    const cookies = await browser.context.cookies(gateway.origin)
    assert.isUndefined(cookies.find((cookie) => cookie.name === "switchyard_session"))
    await shoot("refused")
  })

  it("left no secret in the gateway's log, logged no error in the browser, and broke no WCAG 2 AA rule", () => {
    assert.notInclude(gateway.output(), gateway.clientSecret)
    assert.deepStrictEqual(refusedAll, [])
    // The 401s are the console asking `GET /me` before anyone signed in; the 403 is the refusal
    // page of the person in no group; the refusal page and the identity provider's pages have no icon.
    const expected = [/status of 401.*\/api\/v1\/me\)$/u, /status of 403.*\/ui\/auth\/callback\?/u, /status of 404.*\/favicon\.ico\)$/u]
    const unexpected = consoleErrors.filter((line) => !expected.some((known) => known.test(line)))
    assert.deepStrictEqual(unexpected, [], failed.join("\n"))
    const broken = Object.entries(accessibility).filter(([, found]) => found.length > 0)
    assert.deepStrictEqual(broken, [])
  })
})
