/**
 * The workspace endpoints: workspaces, their members and their budgets, with the public API's
 * paths and shapes (`workspaces.*` in the official SDK).
 *
 * **Details**
 *
 * Every endpoint requires a management key. A workspace is named by its id or its slug; one the
 * calling user is not a member of answers 404 exactly like one that does not exist.
 *
 * @since 0.1.0
 */
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { wire } from "../schema/ApiError.ts"
import {
  BudgetList,
  BudgetParams,
  BudgetResponse,
  BudgetsParams,
  CreateWorkspaceBody,
  Deleted,
  DeleteWorkspaceQuery,
  MemberList,
  MembersAdded,
  MembersBody,
  MembersRemoved,
  PageQuery,
  UpdateWorkspaceBody,
  UpsertBudgetBody,
  WorkspaceList,
  WorkspaceRefParams,
  WorkspaceResponse
} from "../schema/Workspace.ts"
import { Authorization } from "./Authorization.ts"

const errors = [wire[400], wire[403], wire[404], wire[429], wire[500], wire[503]]

/**
 * `GET|POST /workspaces`, `GET|PATCH|DELETE /workspaces/{id}`, `GET /workspaces/{id}/members`,
 * `POST /workspaces/{id}/members/add|remove`, `GET /workspaces/{workspace_ref}/budgets` and
 * `GET|PUT|DELETE /workspaces/{workspace_ref}/budgets/{interval}`.
 *
 * @since 0.1.0
 */
export class WorkspacesApi extends HttpApiGroup.make("workspaces")
  .add(
    HttpApiEndpoint.get("list", "/workspaces", { query: PageQuery, success: WorkspaceList, error: errors }),
    HttpApiEndpoint.post("create", "/workspaces", {
      payload: CreateWorkspaceBody,
      success: WorkspaceResponse.pipe(HttpApiSchema.status(201)),
      error: errors
    }),
    HttpApiEndpoint.get("get", "/workspaces/:id", { params: WorkspaceRefParams, success: WorkspaceResponse, error: errors }),
    // An unknown field is refused rather than ignored: a setting that does nothing is a surprise.
    HttpApiEndpoint.patch("update", "/workspaces/:id", {
      params: WorkspaceRefParams,
      payload: UpdateWorkspaceBody,
      success: WorkspaceResponse,
      error: errors
    }).annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error", errors: "all" }),
    HttpApiEndpoint.delete("delete", "/workspaces/:id", {
      params: WorkspaceRefParams,
      query: DeleteWorkspaceQuery,
      success: Deleted,
      error: errors
    }),
    HttpApiEndpoint.get("listMembers", "/workspaces/:id/members", {
      params: WorkspaceRefParams,
      query: PageQuery,
      success: MemberList,
      error: errors
    }),
    HttpApiEndpoint.post("addMembers", "/workspaces/:id/members/add", {
      params: WorkspaceRefParams,
      payload: MembersBody,
      success: MembersAdded,
      error: errors
    }),
    HttpApiEndpoint.post("removeMembers", "/workspaces/:id/members/remove", {
      params: WorkspaceRefParams,
      payload: MembersBody,
      success: MembersRemoved,
      error: errors
    }),
    HttpApiEndpoint.get("listBudgets", "/workspaces/:workspace_ref/budgets", {
      params: BudgetsParams,
      success: BudgetList,
      error: errors
    }),
    HttpApiEndpoint.get("getBudget", "/workspaces/:workspace_ref/budgets/:interval", {
      params: BudgetParams,
      success: BudgetResponse,
      error: errors
    }),
    HttpApiEndpoint.put("setBudget", "/workspaces/:workspace_ref/budgets/:interval", {
      params: BudgetParams,
      payload: UpsertBudgetBody,
      success: BudgetResponse,
      error: errors
    }),
    HttpApiEndpoint.delete("deleteBudget", "/workspaces/:workspace_ref/budgets/:interval", {
      params: BudgetParams,
      success: Deleted,
      error: errors
    })
  )
  .middleware(Authorization)
{}
