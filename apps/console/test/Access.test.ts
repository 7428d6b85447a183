import { assert, describe, it } from "vitest"
import * as Access from "../src/Access.ts"

const person = (role: Access.InstanceRole | null, workspaces: ReadonlyArray<Access.WorkspaceGrant> = []) =>
  Access.of({ _tag: "Person", userId: "usr_me", role, workspaces })

const key = (workspace_id: string, creator_user_id: string | null) => ({ workspace_id, creator_user_id })

describe("Access", () => {
  it("gives an instance administrator every page and every action, sessions of people included", () => {
    const admin = person("admin")
    assert.deepStrictEqual(admin.pages, Access.pageOrder.filter((page) => page !== "playground"))
    assert.isFalse(admin.readOnly)
    assert.isTrue(admin.manageProviders)
    assert.isTrue(admin.manageSessions)
    assert.isTrue(admin.manageWorkspace("ws_any"))
    assert.isTrue(admin.createKeys("ws_any"))
    assert.isTrue(admin.manageKey(key("ws_any", "usr_someone_else")))
    assert.isTrue(admin.seeBudgets && admin.seeProviderHealth && admin.cancelBatches)
  })

  it("lets a viewer read activity, money, providers' health, batches and the audit log, and change nothing", () => {
    const viewer = person("viewer")
    assert.deepStrictEqual(viewer.pages, ["overview", "workspaces", "providers", "batches", "audit"])
    assert.isTrue(viewer.readOnly)
    assert.isTrue(viewer.seeBudgets)
    assert.isTrue(viewer.seeProviderHealth)
    assert.isFalse(viewer.cancelBatches)
    assert.isFalse(viewer.manageProviders)
    assert.isFalse(viewer.seeOwnProviderKeys)
    assert.isFalse(viewer.manageSessions)
    assert.isFalse(viewer.manageWorkspace("ws_any"))
    assert.isFalse(viewer.createKeys("ws_any"))
    assert.isFalse(viewer.manageKey(key("ws_any", "usr_me")))
    for (const page of ["keys", "playground", "interns", "sessions"] as const) assert.notInclude(viewer.pages, page)
  })

  it("lets a workspace admin manage that workspace's budgets, cache and every key, and nothing of another or of the instance", () => {
    const lead = person(null, [{ id: "ws_search", role: "admin" }])
    assert.deepStrictEqual(lead.pages, ["overview", "keys", "workspaces"])
    assert.isFalse(lead.readOnly)
    assert.isTrue(lead.manageWorkspace("ws_search"))
    assert.isFalse(lead.manageWorkspace("ws_other"))
    assert.isTrue(lead.seeBudgets)
    // Providers are the instance's.
    assert.isFalse(lead.seeProviderHealth)
    assert.isFalse(lead.manageProviders)
    assert.isFalse(lead.cancelBatches)
    assert.isTrue(lead.createKeys("ws_search"))
    assert.isFalse(lead.createKeys("ws_other"))
    assert.isTrue(lead.manageKey(key("ws_search", "usr_someone_else")))
    assert.isFalse(lead.manageKey(key("ws_other", "usr_me")))
    assert.isFalse(lead.manageProviders)
    assert.isFalse(lead.manageSessions)
  })

  it("lets a workspace member manage only the keys they created, in their workspace", () => {
    const member = person(null, [{ id: "ws_search", role: "member" }])
    assert.deepStrictEqual(member.pages, ["overview", "keys", "workspaces"])
    assert.isTrue(member.createKeys("ws_search"))
    assert.isTrue(member.manageKey(key("ws_search", "usr_me")))
    assert.isFalse(member.manageKey(key("ws_search", "usr_someone_else")))
    assert.isFalse(member.manageKey(key("ws_search", null)))
    assert.isFalse(member.manageKey(key("ws_other", "usr_me")))
    assert.isFalse(member.manageWorkspace("ws_search"))
    assert.isTrue(member.seeBudgets)
    assert.notInclude(member.pages, "audit")
    assert.notInclude(member.pages, "sessions")
  })

  it("lets a viewer only read, whatever workspace roles come with it, as the gateway does", () => {
    const both = person("viewer", [{ id: "ws_search", role: "member" }])
    assert.deepStrictEqual(both.pages, person("viewer").pages)
    assert.isTrue(both.readOnly)
    assert.isFalse(both.createKeys("ws_search"))
    assert.isFalse(both.manageKey(key("ws_search", "usr_me")))
  })

  it("shows nothing to a person in no mapped group", () => {
    const nobody = person(null)
    assert.deepStrictEqual(nobody.pages, [])
    assert.isFalse(Access.seesAnything(nobody))
    assert.isTrue(Access.seesAnything(person("viewer")))
  })

  it("keeps what keys saw before people signed in", () => {
    const standard = Access.of({ _tag: "StandardKey" })
    assert.deepStrictEqual(standard.pages, ["overview", "providers", "playground", "batches", "interns"])
    assert.isFalse(standard.manageKey(key("ws_any", null)))
    assert.isTrue(standard.cancelBatches)
    const management = Access.of({ _tag: "ManagementKey", administrator: false })
    assert.deepStrictEqual(management.pages, Access.pageOrder.filter((page) => page !== "sessions"))
    assert.isTrue(management.manageKey(key("ws_any", null)))
    assert.isTrue(management.seeOwnProviderKeys)
    assert.isFalse(management.manageSessions)
    const administrator = Access.of({ _tag: "ManagementKey", administrator: true })
    assert.include(administrator.pages, "sessions")
    assert.isTrue(administrator.manageSessions)
  })
})
