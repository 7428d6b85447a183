import { assert, describe, it } from "vitest"
import * as Me from "../src/Me.ts"

describe("Me", () => {
  it("reads a person's answer of GET /me, with the CSRF token", () => {
    const me = Me.decodeMe({
      user: { id: "usr_1", sub: "alice", email: "alice@example.com", name: "Alice" },
      role: "viewer",
      workspaces: [{ id: "ws_1", role: "member" }, { id: "ws_2", role: "owner" }, "junk"],
      via: "session",
      csrf_token: "t0ken"
    })
    assert.deepStrictEqual(me, {
      user: { id: "usr_1", sub: "alice", email: "alice@example.com", name: "Alice" },
      role: "viewer",
      workspaces: [{ id: "ws_1", role: "member" }],
      via: "session",
      csrf_token: "t0ken"
    })
  })

  it("reads a key's answer, and refuses what is not an answer of GET /me", () => {
    assert.deepStrictEqual(Me.decodeMe({ user: null, role: "admin", workspaces: [], via: "management_key" }), {
      user: null,
      role: "admin",
      workspaces: [],
      via: "management_key"
    })
    assert.isNull(Me.decodeMe({ error: { code: 401, message: "Missing Authorization header" } }))
    assert.isNull(Me.decodeMe({ user: null, role: null, workspaces: [], via: "cookie" }))
    assert.isNull(Me.decodeMe(null))
  })

  it("takes keys only from a gateway that says nothing of single sign-on", () => {
    assert.deepStrictEqual(Me.decodeSignInMethods(null), { sso: false, key: true })
    assert.deepStrictEqual(Me.decodeSignInMethods({ error: { message: "Not found" } }), { sso: false, key: true })
    assert.deepStrictEqual(Me.decodeSignInMethods({ sign_in: { sso: true, key: false } }), { sso: true, key: false })
    assert.deepStrictEqual(Me.decodeSignInMethods({ sign_in: { sso: true } }), { sso: true, key: true })
    assert.deepStrictEqual(Me.decodeSignInMethods({ sso: true, key: false }), { sso: true, key: false })
  })

  it("names a person by name, else email, else subject", () => {
    assert.strictEqual(Me.displayName({ id: "u", sub: "s", email: "e@x", name: "N" }), "N")
    assert.strictEqual(Me.displayName({ id: "u", sub: "s", email: "e@x", name: null }), "e@x")
    assert.strictEqual(Me.displayName({ id: "u", sub: "s", email: null, name: null }), "s")
  })
})
