import "@mantine/core/styles.css"
import "@mantine/charts/styles.css"
import { Alert, createTheme, type CSSVariablesResolver, MantineProvider, Modal } from "@mantine/core"
import { QueryClient, QueryClientProvider } from "@tanstack/react-query"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"

// Indigo at shade 8 keeps white text on buttons above 4.5:1 (WCAG AA).
const theme = createTheme({
  primaryColor: "indigo",
  primaryShade: 8,
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  defaultRadius: "sm",
  components: {
    Modal: Modal.extend({ defaultProps: { closeButtonProps: { "aria-label": "Close" } } }),
    Alert: Alert.extend({ defaultProps: { closeButtonLabel: "Dismiss" } })
  }
})

// Mantine's secondary text (gray 6) and the text of its light variants (shade 9 on a tint) fall
// below 4.5:1 on white; these are darker.
const contrast: CSSVariablesResolver = (resolved) => ({
  variables: {},
  light: {
    "--mantine-color-dimmed": "var(--mantine-color-gray-7)",
    ...Object.fromEntries(
      Object.keys(resolved.colors).map((name) => [`--mantine-color-${name}-light-color`, `color-mix(in srgb, var(--mantine-color-${name}-9) 70%, black)`])
    )
  },
  dark: {}
})

// The gateway client already retries what is worth retrying; a page shows data as of its last
// load (reload buttons and the pages' own actions refresh it).
const queries = new QueryClient({
  defaultOptions: { queries: { retry: false, refetchOnWindowFocus: false, refetchOnReconnect: false } }
})

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <QueryClientProvider client={queries}>
      <MantineProvider theme={theme} defaultColorScheme="light" cssVariablesResolver={contrast}>
        <App />
      </MantineProvider>
    </QueryClientProvider>
  </StrictMode>
)
