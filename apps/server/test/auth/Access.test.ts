import type { PersonShape } from "@switchyard/core/api/Authorization"
import { describe, expect, it } from "vitest"
import * as Access from "../../src/auth/Access.ts"

const person = (role: PersonShape["role"], workspaces: PersonShape["workspaces"] = []): PersonShape => ({
  sub: "s",
  email: null,
  name: null,
  sessionId: "id",
  csrfToken: "t",
  role,
  workspaces
})

// The one table of who may do what: each role against reads, changes and the instance's routes.
describe("Access: what a person's role allows at the management API", () => {
  const admin = person("admin")
  const viewer = person("viewer")
  const member = person(null, [{ id: "w", role: "member" }])
  const none = person(null)

  it("lets an instance admin do everything", () => {
    for (const [method, path] of [["GET", "/sessions"], ["DELETE", "/sessions/x"], ["POST", "/providers"], ["PATCH", "/workspaces/w"], ["POST", "/credits"]]) {
      expect(Access.refusal(admin, method!, path!)).toBeUndefined()
    }
  })

  it("lets a viewer read activity, money, providers' health and the audit log, and nothing else", () => {
    for (const path of ["/activity", "/credits", "/providers", "/audit-log", "/audit-log/verify", "/workspaces", "/me"]) {
      expect(Access.refusal(viewer, "GET", path), path).toBeUndefined()
    }
    expect(Access.refusal(viewer, "GET", "/keys")).toContain("instance role admin")
    expect(Access.refusal(viewer, "GET", "/byok")).toContain("instance role admin")
    expect(Access.refusal(viewer, "GET", "/providers/acme")).toContain("instance role admin")
    expect(Access.refusal(viewer, "GET", "/sessions")).toContain("instance role admin")
    expect(Access.refusal(viewer, "PATCH", "/workspaces/w")).toContain("reads only")
    expect(Access.refusal(viewer, "POST", "/keys")).toContain("reads only")
  })

  it("lets a workspace member at their usage and keys, never the instance's routes", () => {
    for (const [method, path] of [["GET", "/activity"], ["GET", "/keys"], ["POST", "/keys"], ["DELETE", "/keys/abc"], ["GET", "/workspaces"], ["GET", "/workspaces/w/members"], ["GET", "/credits"]]) {
      expect(Access.refusal(member, method!, path!), `${method} ${path}`).toBeUndefined()
    }
    for (const [method, path] of [["POST", "/credits"], ["POST", "/workspaces"], ["GET", "/providers"], ["GET", "/audit-log"], ["GET", "/sessions"], ["POST", "/providers"]]) {
      expect(Access.refusal(member, method!, path!), `${method} ${path}`).toContain("instance role admin")
    }
  })

  it("lets a person with no role read who they are, nothing else", () => {
    expect(Access.refusal(none, "GET", "/me")).toBeUndefined()
    expect(Access.refusal(none, "GET", "/activity")).toContain("instance role admin")
  })

  it("counts every method but GET, HEAD and OPTIONS as a change", () => {
    expect(["GET", "HEAD", "OPTIONS"].map(Access.changes)).toEqual([false, false, false])
    expect(["POST", "PATCH", "PUT", "DELETE"].map(Access.changes)).toEqual([true, true, true, true])
  })
})
