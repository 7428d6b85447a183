import "@mantine/core/styles.css"
import "@mantine/charts/styles.css"
import { createTheme, MantineProvider } from "@mantine/core"
import { StrictMode } from "react"
import { createRoot } from "react-dom/client"
import { App } from "./App.tsx"

// Indigo at shade 8 keeps white text on buttons and links on white above 4.5:1 (WCAG AA).
const theme = createTheme({
  primaryColor: "indigo",
  primaryShade: 8,
  fontFamily: "system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif",
  defaultRadius: "sm"
})

createRoot(document.getElementById("root")!).render(
  <StrictMode>
    <MantineProvider theme={theme} defaultColorScheme="light">
      <App />
    </MantineProvider>
  </StrictMode>
)
