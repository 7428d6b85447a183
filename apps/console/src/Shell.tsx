import { AppShell, Badge, Burger, Button, Group, NavLink, Text, Title } from "@mantine/core"
import { useDisclosure } from "@mantine/hooks"
import { Redirect, Route, Switch, useLocation } from "wouter"
import { useSession } from "./SessionContext.ts"
import { AuditPage } from "./pages/AuditPage.tsx"
import { InternsPage } from "./pages/InternsPage.tsx"
import { KeysPage } from "./pages/KeysPage.tsx"
import { OverviewPage } from "./pages/OverviewPage.tsx"
import { PlaygroundPage } from "./pages/PlaygroundPage.tsx"
import { ProvidersPage } from "./pages/ProvidersPage.tsx"
import { WorkspacesPage } from "./pages/WorkspacesPage.tsx"

interface Page {
  readonly path: string
  readonly title: string
  readonly management: boolean
  readonly component: () => React.JSX.Element
}

// `management`: the page's operations need a management key, so a standard key does not see it.
const pages: ReadonlyArray<Page> = [
  { path: "/", title: "Overview", management: false, component: OverviewPage },
  { path: "/keys", title: "Keys", management: true, component: KeysPage },
  { path: "/workspaces", title: "Workspaces and budgets", management: true, component: WorkspacesPage },
  { path: "/providers", title: "Providers", management: false, component: ProvidersPage },
  { path: "/playground", title: "Route playground", management: false, component: PlaygroundPage },
  { path: "/interns", title: "Interns", management: false, component: InternsPage },
  { path: "/audit", title: "Audit", management: true, component: AuditPage }
]

export const Shell = ({ onSignOut }: { readonly onSignOut: () => void }) => {
  const session = useSession()
  const [opened, { toggle, close }] = useDisclosure()
  const [location, navigate] = useLocation()
  const visible = pages.filter((page) => session.isManagement || !page.management)

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
