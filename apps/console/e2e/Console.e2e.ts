import { afterAll, assert, beforeAll, describe, it } from "vitest"
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import type { ElementHandle, Page } from "playwright-core"
import { Switchyard } from "@switchyard/client/Switchyard"
import * as Format from "../src/Format.ts"
import * as Accessibility from "./Accessibility.ts"
import * as Browser from "./Browser.ts"
import * as SeededGateway from "./SeededGateway.ts"

describe("the web console in Chromium, against a gateway with real traffic", () => {
  let gateway: SeededGateway.SeededGateway
  let browser: Browser.Browser
  let page: Page
  const consoleErrors: Array<string> = []
  const accessibility: Record<string, ReadonlyArray<string>> = {}

  // Every page is photographed for review and checked against WCAG 2 A/AA as it is photographed.
  const shoot = async (name: string) => {
    // What a person sees once the page is still: no transition (a modal fading in, a button's
    // pressed state) half-way, whose colours would be measured mid-change.
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== "running"))
    await page.mouse.move(0, 0)
    await page.screenshot({ path: NodePath.join(Browser.screenshotDir, `${name}.png`), fullPage: true })
    accessibility[name] = await Accessibility.violations(page)
  }

  // Nothing of the region is hidden sideways: its table fits the width it is given.
  const fitsWidth = async (name: string | RegExp) => {
    // The scrolling viewport itself (a section headed by the same words is a region too).
    const region = typeof name === "string" ? page.locator(`[role=region][aria-label="${name}"]`) : page.getByRole("region", { name, exact: true })
    const { scrollWidth, clientWidth } = await region.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }))
    assert.isAtMost(scrollWidth, clientWidth, `${String(name)} scrolls sideways at ${page.viewportSize()?.width} px`)
  }

  // The badges of the scrolling table whose label is cut ("FAILED RECENT…"): its text is wider than the badge.
  const cutBadges = async (name: string) =>
    page.locator(`[role=region][aria-label="${name}"]`).locator(".mantine-Badge-label").evaluateAll((labels) =>
      labels.filter((label) => {
        const text = document.createRange()
        text.selectNodeContents(label)
        // A pixel or two is the label's trailing letter spacing, not a cut.
        return text.getBoundingClientRect().width > label.getBoundingClientRect().width + 3
      }).map((label) => `${label.textContent}: ${label.scrollWidth} > ${label.clientWidth}`)
    )

  // A table wider than its place says so under it, and scrolling its region brings `cell` fully
  // into view inside the region (and the window).
  const reachable = async (region: string, cell: string) => {
    await page.locator(`[data-scroll-cue="${region}"]`).waitFor()
    const viewport = page.locator(`[role=region][aria-label="${region}"]`)
    const { scrollWidth, clientWidth } = await viewport.evaluate((el) => ({ scrollWidth: el.scrollWidth, clientWidth: el.clientWidth }))
    assert.isAbove(scrollWidth, clientWidth, `${region} does not scroll at ${page.viewportSize()?.width} px`)
    const target = viewport.locator(cell)
    await target.evaluate((el) => el.scrollIntoView({ block: "nearest", inline: "nearest" }))
    const [box, area] = [(await target.boundingBox())!, (await viewport.boundingBox())!]
    assert.isAtLeast(box.x, area.x - 1, `${cell} starts left of ${region}`)
    assert.isAtMost(box.x + box.width, area.x + area.width + 1, `${cell} ends right of ${region}`)
    assert.isAtMost(box.x + box.width, page.viewportSize()!.width, `${cell} ends off-screen`)
    await viewport.evaluate((el) => el.scrollTo({ left: 0 }))
  }

  // Each chart's value axis: labels in even steps, every one inside its card, readable (12 px or
  // so) and apart from each other.
  const readableAxes = async () => {
    for (const name of ["Spend per day by model", "Requests per day by provider", "Spend per day by key"]) {
      const chart = page.getByRole("region", { name })
      const card = (await chart.boundingBox())!
      const ticks = chart.locator(".recharts-yAxis-tick-labels text")
      await ticks.first().waitFor()
      const labels = await ticks.allTextContents()
      assert.isAtLeast(labels.length, 2, name)
      const values = labels.map((label) => Number(label.replace(/[$,]/gu, "")))
      const steps = values.slice(1).map((v, i) => Number((v - values[i]!).toPrecision(6)))
      assert.deepStrictEqual(new Set(steps).size, 1, `${name}: ${labels.join(" ")}`)
      assert.strictEqual(new Set(labels.map((label) => label.split(".")[1]?.length ?? 0)).size, 1, `${name}: ${labels.join(" ")}`)
      const boxes = (await Promise.all((await ticks.all()).map((tick) => tick.boundingBox()))).map((box) => box!)
      for (const box of boxes) {
        assert.isAtLeast(box.x, card.x, `${name}: a label starts left of its card at ${page.viewportSize()?.width} px`)
        assert.isAtMost(box.x + box.width, card.x + card.width, `${name}: a label ends right of its card`)
        assert.isAtLeast(box.height, 11, `${name}: a label is smaller than 11 px`)
      }
      const byHeight = [...boxes].sort((a, b) => a.y - b.y)
      for (let i = 1; i < byHeight.length; i++) {
        assert.isAtLeast(byHeight[i]!.y, byHeight[i - 1]!.y + byHeight[i - 1]!.height - 1, `${name}: labels overlap: ${labels.join(" ")}`)
      }
      // The plot keeps most of the card: the labels do not crowd the bars out.
      const plot = (await chart.locator(".recharts-cartesian-grid").boundingBox())!
      assert.isAtLeast(plot.width, card.width / 2, `${name}: the plot is ${plot.width} px of ${card.width}`)
    }
  }

  // The overview's figures for a model billed per search whose id has a dot: the spend chart's
  // legend names it whole (`cohere/rerank-v3.5`, never `5`) beside a bar of its own, and the
  // embeddings-cache table leaves it out (a rerank model has no embeddings cache).
  const rerankFigures = async () => {
    const width = page.viewportSize()?.width
    const chart = page.getByRole("region", { name: "Spend per day by model" })
    const legend = chart.locator(".recharts-legend-wrapper p")
    await legend.first().waitFor()
    const names = await legend.allInnerTexts()
    assert.include(names, "cohere/rerank-v3.5", `legend at ${width} px: ${names.join(", ")}`)
    for (const name of names) assert.match(name, /^[a-z0-9-]+\/[a-z0-9.-]+$/u, `a legend entry is not a model id at ${width} px`)
    // Its series is drawn: the hidden table of the chart reads its spend as dollars, not $0.00 or NaN.
    const column = (await chart.locator("table thead th").allTextContents()).indexOf("cohere/rerank-v3.5")
    assert.isAbove(column, 0)
    const spent = await chart.locator(`table tbody tr td:nth-child(${column + 1})`).allTextContents()
    assert.isTrue(spent.some((text) => /^\$0\.00[1-9]/u.test(text)), `rerank spend at ${width} px: ${spent.join(" ")}`)
    const cache = page.getByRole("region", { name: "Embeddings cache by model, last 30 days" })
    await cache.locator('tr[data-model="acme/embed-large"]').waitFor()
    assert.strictEqual(await cache.locator('tr[data-model="cohere/rerank-v3.5"]').count(), 0, `at ${width} px`)
    assert.notInclude(await cache.innerText(), "rerank", `at ${width} px`)
  }

  const open = async (label: string) => {
    await page.getByRole("navigation", { name: "Console pages" }).getByRole("link", { name: label, exact: true }).click()
    await page.getByRole("heading", { level: 1, name: label }).waitFor()
  }

  const signIn = async (key: string) => {
    await page.goto(`${gateway.origin}/ui/`)
    await page.getByLabel("API key").fill(key)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
  }

  beforeAll(async () => {
    Fs.mkdirSync(Browser.screenshotDir, { recursive: true })
    gateway = await SeededGateway.start()
    browser = await Browser.launch()
    page = await browser.context.newPage()
    page.on("console", (message) => {
      if (message.type() === "error") consoleErrors.push(message.text())
    })
    page.on("pageerror", (error) => consoleErrors.push(String(error)))
  })

  afterAll(async () => {
    await browser?.close()
    await gateway?.close()
  })

  it("refuses a wrong key with the gateway's message", async () => {
    await page.goto(`${gateway.origin}/ui/`)
    await shoot("sign-in")
    await page.getByLabel("API key").fill("sk-sy-v1-not-a-key")
    await page.getByRole("button", { name: "Sign in" }).click()
    const alert = page.getByRole("alert")
    await alert.waitFor()
    assert.match(await alert.innerText(), /key/i)
    assert.strictEqual(await page.evaluate(() => sessionStorage.length), 0)
  })

  it("signs in with the management key, kept in the tab's session storage only", async () => {
    await signIn(gateway.managementKey)
    const stored = await page.evaluate(() => ({ session: Object.values({ ...sessionStorage }), local: localStorage.length }))
    assert.deepStrictEqual(stored, { session: [gateway.managementKey], local: 0 })
    await page.reload()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
  })

  it("draws the overview's charts from the traffic", async () => {
    const today = new Date().toISOString().slice(0, 10)
    const { data: activity } = await gateway.admin.activity.activity({ query: { date: today } })
    const models = [...new Set(activity.map((row) => row.model))].sort()
    const providers = [...new Set(activity.map((row) => row.provider_name))].sort()
    assert.includeMembers(models, ["acme/embed", "acme/embed-large", "switchyard/local-embed"])
    for (const [id, names] of [["spend-by-model", models], ["requests-by-provider", providers], ["spend-by-key", ["Bootstrap API key", "ci-batch", "search-api"]]] as const) {
      const chart = page.getByRole("region", { name: { "spend-by-model": "Spend per day by model", "requests-by-provider": "Requests per day by provider", "spend-by-key": "Spend per day by key" }[id] })
      await chart.locator(".recharts-bar-rectangle path").first().waitFor()
      assert.isAbove(await chart.locator(".recharts-bar-rectangle path").count(), 0, id)
      const legend = await chart.locator(".recharts-legend-wrapper, [class*=legend]").first().innerText()
      for (const name of names) if (id !== "spend-by-model" || name !== "switchyard/local-embed") assert.include(legend, name, id)
    }
    const requestsToday = activity.reduce((sum, row) => sum + row.requests, 0)
    assert.strictEqual(await page.getByRole("region", { name: "Requests today" }).locator("p").nth(1).innerText(), String(requestsToday))
    assert.match(await page.getByRole("region", { name: "Budget left" }).innerText(), /monthly budget of \$10\.00/)
    const flaky = page.getByRole("region", { name: /Errors and latency/ }).locator('tr[data-endpoint="flaky:acme/embed"]')
    assert.match(await flaky.innerText(), /100\.0 %/)
    const beta = page.getByRole("region", { name: /Errors and latency/ }).locator('tr[data-endpoint="beta:acme/embed"]')
    assert.match(await beta.innerText(), /0\.00 %.*\d+ ms/s)
    // At 1280 px every column of the latency table shows, p99 included.
    await fitsWidth("Errors and latency by endpoint")

    // At 1280 px nothing scrolls, so no scroll cue shows.
    assert.strictEqual(await page.locator("[data-scroll-cue]").count(), 0)
    await readableAxes()

    // The cache's share per model and what it saved; the failed requests with provider and reason.
    const cached = page.getByRole("region", { name: "Embeddings cache by model, last 30 days" }).locator('tr[data-model="acme/embed-large"]')
    assert.match(await cached.innerText(), /\d+(\.\d+)? %.*\$0\.\d+/s)
    assert.notMatch(await cached.innerText(), /\b0\.00 %/)
    const failedRow = page.getByRole("region", { name: "Recent failed requests" }).locator('tr[data-failure-provider="flaky"]').first()
    await failedRow.waitFor()
    assert.match(await failedRow.innerText(), /acme\/embed.*flaky.*Tried: flaky \(failure/s)
    await rerankFigures()
    await shoot("overview")
  })

  it("creates a key, shows its secret once with a copy button, then disables it", async () => {
    await open("Keys")
    await page.getByRole("button", { name: "Create key" }).click()
    const dialog = page.getByRole("dialog", { name: "Create a key" })
    await dialog.getByLabel("Name").fill("e2e-key")
    // A management key of user scope is minted with a warning of what it reaches.
    await dialog.getByRole("combobox", { name: "Kind" }).click()
    await page.getByRole("option", { name: "Management key: manages every workspace of your user" }).click()
    await dialog.getByRole("alert").filter({ hasText: "reaches more than this workspace" }).waitFor()
    await dialog.getByRole("combobox", { name: "Kind" }).click()
    await page.getByRole("option", { name: "Standard key: calls models in this workspace" }).click()
    await dialog.getByRole("button", { name: "Create key" }).click()
    const secretDialog = page.getByRole("dialog", { name: "Your new key" })
    await secretDialog.waitFor()
    const secret = await secretDialog.getByLabel("New key secret").innerText()
    assert.match(secret.trim(), /^sk-sy-v1-[0-9a-f]{64}$/)
    await secretDialog.getByRole("button", { name: "Copy key" }).waitFor()
    await shoot("keys-secret")
    await secretDialog.getByRole("button", { name: "Done" }).click()

    await page.getByRole("button", { name: "Disable e2e-key" }).click()
    await page.getByRole("button", { name: "Enable e2e-key" }).waitFor()
    // The whole table fits 1280 px: no action button and no status is cut off.
    await fitsWidth("Keys")
    assert.deepStrictEqual(await cutBadges("Keys"), [])
    const { data } = await gateway.admin.keys.list({ query: { include_disabled: true } })
    assert.isTrue(data.find((key) => key.name === "e2e-key")?.disabled)
    // Each key says what it reaches.
    assert.include(await page.getByRole("row").filter({ hasText: "e2e-key" }).innerText(), "standard · its workspace")
    // Money at the precision it has: a limit of $0.0000001 is not $0.00.
    assert.strictEqual(data.find((key) => key.name === "tiny-limit")?.limit, 0.0000001)
    assert.include(await page.getByRole("row").filter({ hasText: "tiny-limit" }).innerText(), "$0.0000001")
    await shoot("keys")
  })

  it("shows workspaces and their budgets, and sets one", async () => {
    await open("Workspaces and budgets")
    await page.locator('tr[data-budget="monthly"]').waitFor()
    await page.getByRole("combobox", { name: "Interval" }).first().click()
    await page.getByRole("option", { name: "Daily" }).click()
    await page.getByLabel("Limit (USD)").first().fill("2")
    await page.getByRole("button", { name: "Set budget" }).first().click()
    await page.locator('tr[data-budget="daily"]').waitFor()
    assert.include(await page.locator('tr[data-budget="daily"]').innerText(), "$2.00")
    // A workspace without prepaid credits says so, and what limits it, never a negative balance.
    const research = page.getByRole("region", { name: "Research" })
    assert.match(await research.innerText(), /Credits left\s*off/i)
    assert.include(await research.innerText(), "No budgets and no prepaid credits")
    await shoot("workspaces")
  })

  it("turns a workspace's embeddings cache on and off, as the API then reads it", async () => {
    const { data: [workspace] } = await gateway.admin.workspaces.list({ query: {} })
    assert.isDefined(workspace)
    const readBack = async () => (await gateway.admin.workspaces.get({ params: { id: workspace!.id } })).data.cache
    const cacheSwitch = page.getByRole("switch", { name: `Embeddings cache of ${workspace!.name}` })
    const input = (await cacheSwitch.elementHandle()) as ElementHandle<HTMLInputElement>
    const before = await readBack()
    assert.strictEqual(await cacheSwitch.isChecked(), before)
    for (const want of [!before, before]) {
      await cacheSwitch.click()
      // Settled: the switch shows what the gateway answered and takes clicks again.
      await page.waitForFunction(([input, checked]) => input.checked === checked && !input.disabled, [input, want] as const)
      assert.strictEqual(await readBack(), want)
    }
  })

  it("shows providers with their health, measured latency and prices", async () => {
    await open("Providers")
    await page.locator('tr[data-endpoint="alpha:acme/embed-large"]').waitFor()
    assert.include(await page.locator('tr[data-provider="alpha"]').innerText(), "retains data")
    assert.include(await page.locator('tr[data-provider="beta"]').innerText(), "the gateway's")
    // Every call of the flaky endpoint failed: its status never reads healthy.
    const flaky = page.locator('tr[data-endpoint="flaky:acme/embed"]')
    assert.match(await flaky.innerText(), /100\.0 %/)
    assert.oneOf((await flaky.locator(".mantine-Badge-label").innerText()).toLowerCase(), ["failed recently", "failing"])
    // Each endpoint's price in the unit it is charged by: tokens for embeddings, searches for a
    // rerank endpoint billed per search (never $0 for it).
    assert.include(await page.locator('tr[data-endpoint="alpha:acme/embed-large"]').innerText(), "$0.4 / M tokens")
    const rerank = page.locator('tr[data-endpoint="delta:cohere/rerank-v3.5"]')
    assert.include(await rerank.innerText(), "$2 / 1,000 searches")
    assert.notMatch(await rerank.innerText(), /\$0(?![.\d])/)
    assert.include(await page.locator('tr[data-endpoint="local:switchyard/local-rerank"]').innerText(), "free")
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 860 })
      assert.deepStrictEqual(await cutBadges("Endpoints"), [], `at ${width} px`)
      assert.deepStrictEqual(await cutBadges("Providers"), [], `at ${width} px`)
      if (width === 1280) await shoot("providers")
    }
    // At 390 px the endpoints table scrolls, says so, and its error rate can be scrolled to.
    await reachable("Endpoints", 'tr[data-endpoint="flaky:acme/embed"] td:nth-child(4)')
    assert.match(await page.locator('tr[data-endpoint="flaky:acme/embed"] td:nth-child(4)').innerText(), /100\.0 %/)
    await shoot("providers-narrow")
    await page.setViewportSize({ width: 1280, height: 860 })
  })

  it("adds, tests, edits, rotates the key of, disables and deletes a provider; the config file's stay read-only (1280 and 390 px)", async () => {
    // A key the upstream refuses, then the one it takes.
    const secret = "sk-console-omega-secret-1234"
    const rotated = gateway.upstreamKey
    await open("Providers")
    const alpha = page.locator('tr[data-provider="alpha"]')
    await alpha.waitFor()
    assert.strictEqual(await alpha.getAttribute("data-source"), "config")
    assert.include(await alpha.innerText(), "read-only")
    assert.strictEqual(await page.getByRole("button", { name: "Manage Alpha Cloud" }).count(), 0)
    // Health from its endpoints: every call of flaky's failed.
    await page.locator('tr[data-provider="flaky"]').getByText(/failing|failed recently/).waitFor()
    await alpha.getByText("healthy").waitFor()

    // What the config file's schema refuses comes back with the field it names.
    await page.getByRole("button", { name: "Add provider" }).click()
    const add = page.getByRole("dialog", { name: "Add a provider" })
    const endpoint: Record<string, unknown> = { model: "omega/embed", upstream_model: "embed", pricing: { prompt: "0.00000003" }, dimensions: 16 }
    const omega = { slug: "omega", name: "Omega Cloud", adapter: "openai", base_url: gateway.upstreamUrl, data_collection: "deny", endpoints: [endpoint] }
    await add.getByLabel("Provider (as in the config file)").fill(JSON.stringify(omega, null, 2))
    await add.getByLabel("Upstream API key").fill(secret)
    const errorsBefore = consoleErrors.length
    await add.getByRole("button", { name: "Add provider" }).click()
    await add.getByRole("alert").waitFor()
    assert.include(await add.getByRole("alert").innerText(), "max_batch_items")
    // The browser logs the refusal it was sent on purpose; nothing else.
    assert.deepStrictEqual(consoleErrors.splice(errorsBefore).map((text) => /status of 400/.test(text)), [true])
    await shoot("providers-add-refused")
    endpoint.max_batch_items = 64
    await add.getByLabel("Provider (as in the config file)").fill(JSON.stringify(omega, null, 2))
    await add.getByRole("button", { name: "Add provider" }).click()
    await page.getByRole("status").getByText("Added omega").waitFor()
    const row = page.locator('tr[data-provider="omega"]')
    await row.waitFor()
    assert.strictEqual(await row.getAttribute("data-source"), "api")
    assert.include(await row.innerText(), "set, ends in 1234")
    await row.getByText("active").waitFor()

    // The upstream refuses this key: the test says so, with its status and latency.
    await page.getByRole("button", { name: "Test Omega Cloud" }).click()
    const refused = page.getByRole("region", { name: "Test of Omega Cloud" }).locator('tr[data-tested="omega/embed"]')
    await refused.waitFor()
    assert.match(await refused.innerText(), /failed\s+401\s+\d+ ms/iu)
    assert.include(await page.getByRole("alert").filter({ hasText: "Test of Omega Cloud" }).innerText(), "1 of 1 endpoints failed")
    await fitsWidth("Providers")
    assert.deepStrictEqual(await cutBadges("Providers"), [])
    await shoot("providers-admin")

    await page.getByRole("button", { name: "Manage Omega Cloud" }).click()
    await page.getByRole("menuitem", { name: "Edit" }).click()
    const edit = page.getByRole("dialog", { name: "Edit omega" })
    const editor = edit.getByLabel("Provider (as in the config file)")
    await page.waitForFunction(() => document.querySelector("textarea")?.value.includes("omega/embed") === true)
    const stored = JSON.parse(await editor.inputValue())
    assert.notProperty(stored, "api_key")
    await editor.fill(JSON.stringify({ ...stored, name: "Omega Cloud EU" }, null, 2))
    await edit.getByRole("button", { name: "Save provider" }).click()
    await page.getByRole("status").getByText("Saved omega").waitFor()
    await row.getByText("Omega Cloud EU").waitFor()

    await page.getByRole("button", { name: "Manage Omega Cloud EU" }).click()
    await page.getByRole("menuitem", { name: "Rotate key" }).click()
    const rotate = page.getByRole("dialog", { name: "Upstream key of Omega Cloud EU" })
    await rotate.getByLabel("New upstream API key").fill(rotated)
    await rotate.getByRole("button", { name: "Save key" }).click()
    await page.getByRole("status").getByText("set, ends in 5678").waitFor()
    await row.getByText("set, ends in 5678").waitFor()
    // The upstream takes the new key.
    await page.getByRole("button", { name: "Test Omega Cloud EU" }).click()
    const answered = page.getByRole("region", { name: "Test of Omega Cloud EU" }).locator('tr[data-tested="omega/embed"]')
    await answered.waitFor()
    assert.match(await answered.innerText(), /answered\s+200\s+\d+ ms/iu)
    await page.getByRole("status").filter({ hasText: "Every endpoint answered (1)" }).waitFor()
    await shoot("providers-tested")
    const html = await page.content()
    assert.notInclude(html, secret)
    assert.notInclude(html, rotated)
    assert.deepStrictEqual((await gateway.admin.providerAdmin.get({ params: { slug: "omega" } })).data.api_key, { set: true, last4: "5678" })

    await page.getByRole("button", { name: "Manage Omega Cloud EU" }).click()
    await page.getByRole("menuitem", { name: "Disable" }).click()
    await row.getByText("disabled").waitFor()
    assert.isFalse((await gateway.admin.providerAdmin.get({ params: { slug: "omega" } })).data.enabled)

    // At 390 px the table scrolls, says so, and the row's actions can be scrolled to.
    await page.setViewportSize({ width: 390, height: 844 })
    await page.waitForFunction(() => {
      const nav = document.querySelector('nav[aria-label="Console pages"]')
      return nav === null || nav.getBoundingClientRect().right <= 0
    })
    await reachable("Providers", 'tr[data-provider="omega"] td:last-child')
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.isAtMost(overflow, 0)
    await shoot("providers-admin-narrow")
    await page.setViewportSize({ width: 1280, height: 860 })

    await page.getByRole("button", { name: "Manage Omega Cloud EU" }).click()
    await page.getByRole("menuitem", { name: "Delete" }).click()
    await page.getByRole("dialog", { name: "Delete Omega Cloud EU?" }).getByRole("button", { name: "Delete provider" }).click()
    await page.getByRole("status").getByText("Deleted Omega Cloud EU").waitFor()
    await row.waitFor({ state: "detached" })
    const gone = await gateway.admin.providerAdmin.get({ params: { slug: "omega" } }).then(() => undefined, (error: unknown) => error)
    assert.strictEqual((gone as { readonly _tag?: string } | undefined)?._tag, "NotFound")
    const { data: audited } = await gateway.admin.audit.list({ query: { target_type: "provider", target_id: "omega" } })
    assert.deepStrictEqual(audited.map((entry) => entry.action).reverse(), ["provider.create", "provider.update", "provider.update", "provider.disable", "provider.delete"])
  })

  it("explains in the route playground why a provider is excluded, then sends the request", async () => {
    await open("Route playground")
    await page.getByLabel("Standard key to run with").fill(gateway.apiKey)
    await page.getByLabel(/^Model/).first().click()
    await page.getByRole("option", { name: /^acme\/embed / }).click()
    await page.getByLabel("Zero data retention only").check()
    await page.getByRole("button", { name: "Explain route" }).click()
    const alpha = page.locator('tr[data-provider="alpha"]')
    await alpha.waitFor()
    assert.strictEqual(await alpha.getAttribute("data-status"), "excluded")
    assert.match(await alpha.innerText(), /zdr/)
    assert.deepStrictEqual(await page.locator('tr[data-status="attempt"]').evaluateAll((rows) => rows.map((row) => row.getAttribute("data-provider")).sort()), ["beta", "flaky", "gamma"])
    await page.getByRole("button", { name: "Send for real" }).click()
    await page.getByRole("heading", { name: "Sent for real" }).waitFor()
    assert.match(await page.getByRole("region", { name: "Sent for real" }).innerText(), /Served by .*\((beta|gamma)\)/)
    // A request that cost a fraction of a millionth of a dollar shows that cost, never $0.00.
    assert.match(await page.getByRole("region", { name: "Sent for real" }).innerText(), /cost \$0\.0*[1-9]/)
    await shoot("playground")

    // Sent again, to a provider that fails: one click is one request, and only the error shows,
    // headed as the upstream provider's failure, not as the gateway refusing the request.
    for (const width of [1280, 390]) {
      await page.setViewportSize({ width, height: width === 390 ? 844 : 860 })
      const sent: Array<string> = []
      const count = (request: { method: () => string; url: () => string }) => {
        if (request.method() === "POST" && request.url().endsWith("/api/v1/embeddings")) sent.push(request.url())
      }
      page.on("request", count)
      const errorsBefore = consoleErrors.length
      await page.getByLabel("Only", { exact: true }).fill("flaky")
      // A failed send leaves no plan: the route is explained again before the next send.
      if (await page.getByRole("region", { name: /^Plan for/ }).count() === 0) {
        await page.getByRole("button", { name: "Explain route" }).click()
        await page.getByRole("region", { name: /^Plan for/ }).waitFor()
      }
      const answered = page.waitForResponse((response) => response.request().method() === "POST" && response.url().endsWith("/api/v1/embeddings"))
      await page.getByRole("button", { name: "Send for real" }).click()
      await answered
      await page.getByRole("alert").waitFor()
      await page.waitForFunction(() => !document.querySelector("button[data-loading]"))
      page.off("request", count)
      assert.strictEqual(sent.length, 1)
      // The browser logs the failed answer it was sent on purpose; nothing else.
      assert.deepStrictEqual(consoleErrors.splice(errorsBefore).map((text) => /status of 5\d\d/.test(text)), [true])
      assert.strictEqual(await page.getByRole("region", { name: "Sent for real" }).count(), 0)
      assert.strictEqual(await page.getByRole("region", { name: /^Plan for/ }).count(), 0)
      const heading = await page.getByRole("alert").locator(".mantine-Alert-title").innerText()
      assert.match(heading, /^The upstream provider flaky failed/, `at ${width} px`)
      assert.notInclude(await page.getByRole("alert").innerText(), "The gateway refused", `at ${width} px`)
      await shoot(width === 1280 ? "playground-failed" : "playground-failed-narrow")
      await page.getByLabel("Only", { exact: true }).fill("")
    }
    await page.setViewportSize({ width: 1280, height: 860 })
  })

  it("reranks in the route playground with the local model", async () => {
    await open("Route playground")
    await page.getByLabel("Standard key to run with").fill(gateway.apiKey)
    await page.locator("label", { hasText: /^Rerank$/u }).click()
    await page.getByLabel(/^Model/).first().click()
    await page.getByRole("option", { name: /^switchyard\/local-rerank / }).click()
    await page.getByLabel(/^Query/).fill("how do plants make sugar")
    await page.getByLabel(/^Documents/).fill("The train leaves at nine.\nPlants turn sunlight into sugar.\nFlour and eggs.")
    await page.getByRole("button", { name: "Explain route" }).click()
    const local = page.locator('tr[data-provider="local"][data-status="attempt"]')
    await local.waitFor()
    assert.include(await local.innerText(), "free", "the local rerank endpoint charges neither searches nor tokens")
    await page.getByRole("button", { name: "Send for real" }).click()
    const first = page.getByRole("table", { name: "Ranked documents" }).locator("tbody tr").first()
    await first.waitFor()
    assert.strictEqual(await first.getAttribute("data-index"), "1")
    assert.match(await page.getByRole("region", { name: "Sent for real" }).innerText(), /Served by local/)
  })

  it("suspends a running intern", async () => {
    await open("Interns")
    const row = page.locator('tr[data-intern="support-bot"]')
    await row.getByText("running").waitFor()
    await page.getByRole("button", { name: "Suspend support-bot" }).click()
    await page.getByRole("status").getByText("Suspended support-bot").waitFor()
    await row.getByText("stopped").waitFor()
    const interns = await gateway.admin.interns.list({ query: {} })
    assert.strictEqual(interns.data.find((intern) => intern.name === "support-bot")?.status, "stopped")
    await shoot("interns")
  })

  it("reads the audit log with filters, before and after, pages and the chain's verification, at 1280 and 390 px", async () => {
    await open("Audit")
    const rows = page.locator("tr[data-audit-id]")
    await rows.first().waitFor()
    const ids = async () => (await rows.evaluateAll((all) => all.map((row) => Number(row.getAttribute("data-audit-id")))))
    const apply = async () => {
      const answered = page.waitForResponse((response) => response.url().includes("/api/v1/audit-log?"))
      await page.getByRole("button", { name: "Apply filters" }).click()
      await answered
      await page.waitForFunction(() => document.querySelector("table[aria-busy=true]") === null)
    }

    // A resource's actions: the key disabled earlier, with what changed.
    await page.getByLabel("Action", { exact: true }).fill("key.*")
    await apply()
    const actions = await rows.evaluateAll((all) => all.map((row) => row.getAttribute("data-action")))
    assert.isAbove(actions.length, 0)
    for (const action of actions) assert.match(action ?? "", /^key\./u)
    const disabled = page.locator('tr[data-action="key.update"]').filter({ has: page.locator('[data-field="disabled"]') }).first()
    assert.match(await disabled.locator('[data-field="disabled"]').innerText(), /disabled\s+false\s+→\s+true/u)
    assert.include(await disabled.innerText(), "Bootstrap management key")

    // A time range that starts tomorrow holds nothing.
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)
    await page.getByLabel("From (UTC)").fill(tomorrow)
    await apply()
    assert.strictEqual(await rows.count(), 0)
    await page.getByText("No entry matches these filters.").waitFor()
    await page.getByLabel("From (UTC)").fill("")
    await page.getByLabel("Action", { exact: true }).fill("")

    // Pages of ten, newest first, as the API pages them.
    await page.getByRole("combobox", { name: "Per page" }).click()
    await page.getByRole("option", { name: "10", exact: true }).click()
    await apply()
    const api = await gateway.admin.audit.list({ query: { limit: 10 } })
    assert.isNotNull(api.next_cursor, "the seeded gateway has more than ten entries")
    const first = await ids()
    assert.deepStrictEqual(first, api.data.map((entry) => entry.id))
    await page.getByRole("button", { name: "Older" }).click()
    await page.waitForFunction((top) => Number(document.querySelector("tr[data-audit-id]")?.getAttribute("data-audit-id")) < top, first.at(-1)!)
    const second = await ids()
    assert.isAbove(second.length, 0)
    assert.isBelow(Math.max(...second), Math.min(...first))
    await page.getByRole("button", { name: "Newer" }).click()
    await page.waitForFunction((top) => document.querySelector("tr[data-audit-id]")?.getAttribute("data-audit-id") === String(top), first[0]!)

    await page.getByRole("button", { name: "Verify the chain" }).click()
    const verified = page.getByRole("status").filter({ hasText: "The chain holds" })
    await verified.waitFor()
    assert.match(await verified.innerText(), /Every link of \d+ entries checked/u)
    await fitsWidth("Audit log")
    await shoot("audit")

    await page.setViewportSize({ width: 390, height: 844 })
    // The shell moves its navigation off the screen with a transition: measure once it is gone.
    await page.waitForFunction(() => {
      const nav = document.querySelector('nav[aria-label="Console pages"]')
      return nav === null || nav.getBoundingClientRect().right <= 0
    })
    await page.waitForFunction(() => document.getAnimations().every((a) => a.playState !== "running"))
    await reachable("Audit log", `tr[data-audit-id="${first[0]}"] td:nth-child(5)`)
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.isAtMost(overflow, 0)
    await shoot("audit-narrow")
    await page.setViewportSize({ width: 1280, height: 860 })
  })

  it("fits the overview to a 390 px screen: charts' axes readable, the error rate within reach", async () => {
    await page.setViewportSize({ width: 390, height: 844 })
    await page.getByRole("button", { name: "Toggle navigation" }).click()
    await page.getByRole("navigation", { name: "Console pages" }).getByRole("link", { name: "Overview", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Overview" }).waitFor()
    await page.locator('tr[data-endpoint="flaky:acme/embed"]').waitFor()
    await readableAxes()
    await reachable("Errors and latency by endpoint", 'tr[data-endpoint="flaky:acme/embed"] td:nth-child(3)')
    assert.match(await page.locator('tr[data-endpoint="flaky:acme/embed"] td:nth-child(3)').innerText(), /100\.0 %/)
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.isAtMost(overflow, 0)
    await rerankFigures()
    await shoot("overview-narrow")
    await page.setViewportSize({ width: 1280, height: 860 })
  })

  it("shows a standard key its own usage and limits, and fits a narrow screen", async () => {
    await page.getByRole("button", { name: "Sign out" }).click()
    await signIn(gateway.apiKey)
    await page.getByText("Spent today").waitFor()
    const nav = page.getByRole("navigation", { name: "Console pages" })
    assert.strictEqual(await nav.getByRole("link", { name: "Keys", exact: true }).count(), 0)
    await shoot("overview-standard-key")
    await page.setViewportSize({ width: 390, height: 844 })
    await page.getByRole("button", { name: "Toggle navigation" }).click()
    await nav.getByRole("link", { name: "Interns", exact: true }).click()
    await page.getByRole("heading", { level: 1, name: "Interns" }).waitFor()
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.isAtMost(overflow, 0)
    await shoot("interns-narrow")
  })

  /** The Batches page at 390 px: the navigation folded away, the seeded batch's actions within reach, nothing wider than the screen. */
  const batchesOnAPhone = async (name: string) => {
    await page.setViewportSize({ width: 390, height: 844 })
    await page.waitForFunction(() => {
      const nav = document.querySelector('nav[aria-label="Console pages"]')
      return nav === null || nav.getBoundingClientRect().right <= 0
    })
    await reachable("Batches", `tr[data-batch="${gateway.batchId}"] td:last-child`)
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)
    assert.isAtMost(overflow, 0)
    await shoot(name)
  }

  it("lists the workspace's batches with progress, lines served and failed, cost so far; downloads an output, cancels a running batch (1280 and 390 px)", async () => {
    await page.setViewportSize({ width: 1280, height: 860 })
    const standard = new Switchyard({ baseUrl: gateway.origin, apiKey: gateway.apiKey, retry: false })
    try {
      // A batch on the slow upstream: still running when it is cancelled.
      const slow = await SeededGateway.submitBatch(gateway.origin, gateway.apiKey, Array.from({ length: 6 }, (_, i) => ({
        custom_id: `s${i}`,
        body: { model: "acme/slow-embed", input: `slow line ${i}` }
      })))
      await open("Batches")
      const done = page.locator(`tr[data-batch="${gateway.batchId}"]`)
      await done.waitFor()
      const seeded = await standard.batches.get({ params: { batch_id: gateway.batchId } })
      assert.deepStrictEqual(seeded.request_counts, { total: 6, completed: 5, failed: 1 })
      assert.isAbove(seeded.cost, 0)
      assert.strictEqual(await done.getAttribute("data-status"), "completed")
      const cells = await done.locator("td").allInnerTexts()
      assert.match(cells[2]!, /6 of 6 lines/u)
      assert.deepStrictEqual(cells.slice(3, 6), ["5", "1", Format.money(seeded.cost)])
      assert.strictEqual(await done.getByRole("progressbar", { name: `Progress of ${gateway.batchId}` }).getAttribute("aria-valuenow"), "100")

      // The output file as the browser saves it: the five served lines, each once.
      const [saved] = await Promise.all([
        page.waitForEvent("download"),
        page.getByRole("button", { name: `Download the output of ${gateway.batchId}` }).click()
      ])
      assert.strictEqual(saved.suggestedFilename(), `${gateway.batchId}-output.jsonl`)
      const output = Fs.readFileSync(await saved.path(), "utf8").trim().split("\n").map((line) => JSON.parse(line) as { custom_id: string })
      assert.sameMembers(output.map((line) => line.custom_id), ["c0", "c1", "c2", "c3", "c4"])

      const running = page.locator(`tr[data-batch="${slow}"]`)
      await running.waitFor()
      await page.getByRole("button", { name: `Cancel ${slow}` }).click()
      await page.getByRole("status").getByText(`Cancelling ${slow}`).waitFor()
      // The page reads moving batches again by itself until this one settles.
      await page.locator(`tr[data-batch="${slow}"][data-status="cancelled"]`).waitFor({ timeout: 30_000 })
      const cancelled = await standard.batches.get({ params: { batch_id: slow } })
      assert.strictEqual(cancelled.status, "cancelled")
      assert.isAtMost(cancelled.request_counts.completed + cancelled.request_counts.failed, 6)
      assert.strictEqual(await page.getByRole("button", { name: `Cancel ${slow}` }).count(), 0)
      await fitsWidth("Batches")
      assert.deepStrictEqual(await cutBadges("Batches"), [])
      await shoot("batches")

      await batchesOnAPhone("batches-narrow")
    } finally {
      await standard.close()
      await page.setViewportSize({ width: 1280, height: 860 })
    }
  })

  it("a management sign-in oversees every workspace's batches: lists them with their workspace, cancels a running one (1280 and 390 px)", async () => {
    await page.setViewportSize({ width: 1280, height: 860 })
    const running = await SeededGateway.submitBatch(gateway.origin, gateway.apiKey, Array.from({ length: 6 }, (_, i) => ({
      custom_id: `m${i}`,
      body: { model: "acme/slow-embed", input: `overseen line ${i}` }
    })))
    await page.getByRole("button", { name: "Sign out" }).click()
    await signIn(gateway.managementKey)
    try {
      await open("Batches")
      const seeded = page.locator(`tr[data-batch="${gateway.batchId}"]`)
      await seeded.waitFor()
      const workspace = (await (await fetch(`${gateway.origin}/api/v1/batches/${gateway.batchId}`, {
        headers: { authorization: `Bearer ${gateway.managementKey}` }
      })).json() as { workspace_id: string }).workspace_id
      assert.strictEqual((await seeded.locator("td").allInnerTexts())[1], workspace)
      // Files are the workspace's standard keys' to read: no download here.
      assert.strictEqual(await page.getByRole("button", { name: `Download the output of ${gateway.batchId}` }).count(), 0)
      await page.locator(`tr[data-batch="${running}"]`).waitFor()
      await page.getByRole("button", { name: `Cancel ${running}` }).click()
      await page.getByRole("status").getByText(`Cancelling ${running}`).waitFor()
      await page.locator(`tr[data-batch="${running}"][data-status="cancelled"]`).waitFor({ timeout: 30_000 })
      const audit = await (await fetch(`${gateway.origin}/api/v1/audit-log?action=batch.cancel`, {
        headers: { authorization: `Bearer ${gateway.managementKey}` }
      })).json() as { data: Array<{ target: { id: string } }> }
      assert.include(audit.data.map((e) => e.target.id), running)
      await fitsWidth("Batches")
      assert.deepStrictEqual(await cutBadges("Batches"), [])
      await shoot("batches-management")

      await batchesOnAPhone("batches-management-narrow")
    } finally {
      await page.setViewportSize({ width: 1280, height: 860 })
    }
  })

  it("breaks no WCAG 2 A/AA rule axe-core checks (labels, names, contrast) on any page", () => {
    assert.isAbove(Object.keys(accessibility).length, 14)
    assert.deepStrictEqual(Object.fromEntries(Object.entries(accessibility).filter(([, found]) => found.length > 0)), {})
  })

  it("logged no errors in the page", () => {
    assert.deepStrictEqual(consoleErrors.filter((text) => !/Failed to load resource: the server responded with a status of 401/.test(text)), [])
  })
})
