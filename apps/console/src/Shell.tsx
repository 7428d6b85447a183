import { AppShell, Badge, Burger, Button, Group, NavLink, Text, Title } from "@mantine/core"
import { useDisclosure } from "@mantine/hooks"
import { Redirect, Route, Switch, useLocation } from "wouter"
import { useSession } from "./SessionContext.ts"
import { AuditPage } from "./pages/AuditPage.tsx"
import { BatchesPage } from "./pages/BatchesPage.tsx"
import { InternsPage } from "./pages/InternsPage.tsx"
import { KeysPage } from "./pages/KeysPage.tsx"
import { OverviewPage } from "./pages/OverviewPage.tsx"
import { PlaygroundPage } from "./pages/PlaygroundPage.tsx"
import { ProvidersPage } from "./pages/ProvidersPage.tsx"
import { WorkspacesPage } from "./pages/WorkspacesPage.tsx"

interface Page {
  readonly path: string
  readonly title: string
  readonly keys: "any" | "management" | "standard"
  readonly component: () => React.JSX.Element
}

// `keys`: which keys the page's operations take (management operations, or any key: batches are
// a standard key's own and a management key's to oversee); other keys do not see the page.
const pages: ReadonlyArray<Page> = [
  { path: "/", title: "Overview", keys: "any", component: OverviewPage },
  { path: "/keys", title: "Keys", keys: "management", component: KeysPage },
  { path: "/workspaces", title: "Workspaces and budgets", keys: "management", component: WorkspacesPage },
  { path: "/providers", title: "Providers", keys: "any", component: ProvidersPage },
  { path: "/playground", title: "Route playground", keys: "any", component: PlaygroundPage },
  { path: "/batches", title: "Batches", keys: "any", component: BatchesPage },
  { path: "/interns", title: "Interns", keys: "any", component: InternsPage },
  { path: "/audit", title: "Audit", keys: "management", component: AuditPage }
]

export const Shell = ({ onSignOut }: { readonly onSignOut: () => void }) => {
  const session = useSession()
  const [opened, { toggle, close }] = useDisclosure()
  const [location, navigate] = useLocation()
  const visible = pages.filter((page) => page.keys === "any" || page.keys === (session.isManagement ? "management" : "standard"))

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
            <Badge variant="light" color={session.isManagement ? "indigo" : "teal"} visibleFrom="xs">
              {session.isManagement ? "management key" : "standard key"}
            </Badge>
            <Text size="sm" visibleFrom="md" ff="monospace" aria-label="Signed in with key">{session.key.label}</Text>
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
        <Switch>
          {visible.map((page) => <Route key={page.path} path={page.path} component={page.component} />)}
          <Route><Redirect to="/" /></Route>
        </Switch>
      </AppShell.Main>
    </AppShell>
  )
}
