import { Alert, AppShell, Badge, Burger, Button, Group, NavLink, Text, Title } from "@mantine/core"
import { useDisclosure } from "@mantine/hooks"
import { Redirect, Route, Switch, useLocation } from "wouter"
import type * as Access from "./Access.ts"
import * as Me from "./Me.ts"
import type { Session } from "./Session.ts"
import { useSession } from "./SessionContext.ts"
import { AuditPage } from "./pages/AuditPage.tsx"
import { BatchesPage } from "./pages/BatchesPage.tsx"
import { InternsPage } from "./pages/InternsPage.tsx"
import { KeysPage } from "./pages/KeysPage.tsx"
import { OverviewPage } from "./pages/OverviewPage.tsx"
import { PlaygroundPage } from "./pages/PlaygroundPage.tsx"
import { ProvidersPage } from "./pages/ProvidersPage.tsx"
import { SessionsPage } from "./pages/SessionsPage.tsx"
import { WorkspacesPage } from "./pages/WorkspacesPage.tsx"

interface Page {
  readonly id: Access.PageId
  readonly path: string
  readonly title: string
  readonly component: () => React.JSX.Element
}

// Which of them the one signed in sees is Access.ts's rule.
const pages: ReadonlyArray<Page> = [
  { id: "overview", path: "/", title: "Overview", component: OverviewPage },
  { id: "keys", path: "/keys", title: "Keys", component: KeysPage },
  { id: "workspaces", path: "/workspaces", title: "Workspaces and budgets", component: WorkspacesPage },
  { id: "providers", path: "/providers", title: "Providers", component: ProvidersPage },
  { id: "playground", path: "/playground", title: "Route playground", component: PlaygroundPage },
  { id: "batches", path: "/batches", title: "Batches", component: BatchesPage },
  { id: "interns", path: "/interns", title: "Interns", component: InternsPage },
  { id: "audit", path: "/audit", title: "Audit", component: AuditPage },
  { id: "sessions", path: "/sessions", title: "Sessions", component: SessionsPage }
]

const roleWords = (person: NonNullable<Session["person"]>): string => {
  if (person.role !== null) return person.role === "admin" ? "instance admin" : "viewer"
  const roles = new Set(person.workspaces.map((workspace) => workspace.role))
  return roles.has("admin") ? "workspace admin" : roles.has("member") ? "workspace member" : "no role"
}

/** Who is signed in: a person's name and role, or the key's kind and label. */
const SignedInAs = ({ session }: { readonly session: Session }) =>
  session.person !== null
    ? (
      <>
        <Badge variant="light" color={session.person.role === "admin" ? "indigo" : "teal"} visibleFrom="xs" aria-label="Role">
          {roleWords(session.person)}
        </Badge>
        <Text size="sm" visibleFrom="md" aria-label="Signed in as" title={session.person.user.email ?? undefined}>
          {Me.displayName(session.person.user)}
        </Text>
      </>
    )
    : (
      <>
        <Badge variant="light" color={session.isManagement ? "indigo" : "teal"} visibleFrom="xs">
          {session.isManagement ? "management key" : "standard key"}
        </Badge>
        <Text size="sm" visibleFrom="md" ff="monospace" aria-label="Signed in with key">{session.key?.label}</Text>
      </>
    )

export const Shell = ({ onSignOut }: { readonly onSignOut: () => void }) => {
  const session = useSession()
  const [opened, { toggle, close }] = useDisclosure()
  const [location, navigate] = useLocation()
  const visible = pages.filter((page) => session.access.pages.includes(page.id))

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 230, breakpoint: "sm", collapsed: { mobile: !opened } }}
      padding="md"
    >
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger opened={opened} onClick={toggle} hiddenFrom="sm" size="sm" aria-label="Toggle navigation" />
            <Title order={2} size="h4">Switchyard</Title>
          </Group>
          <Group gap="sm" wrap="nowrap">
            <SignedInAs session={session} />
            <Button variant="default" size="xs" onClick={onSignOut}>Sign out</Button>
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label="Console pages">
        {visible.map((page) => (
          <NavLink
            key={page.path}
            href={`/ui${page.path}`}
            label={page.title}
            active={location === page.path}
            aria-current={location === page.path ? "page" : undefined}
            onClick={(event) => {
              event.preventDefault()
              navigate(page.path)
              close()
            }}
          />
        ))}
      </AppShell.Navbar>
      <AppShell.Main>
        {visible.length === 0 && (
          <Alert color="yellow" title="Nothing to show" role="status">
            You are signed in, but none of your groups gives you a role on this gateway. Ask its administrators to add you
            to a group the gateway maps to a role, then sign in again.
          </Alert>
        )}
        <Switch>
          {visible.map((page) => <Route key={page.path} path={page.path} component={page.component} />)}
          {visible.length > 0 && <Route><Redirect to="/" /></Route>}
        </Switch>
      </AppShell.Main>
    </AppShell>
  )
}
