import { mergeConfig } from "vitest/config"
import shared from "../../vitest.shared.ts"

export default mergeConfig(shared, {
  test: { globalSetup: ["test/support/globalSetup.ts", "test/support/BuildBundle.ts", "test/reliability/Summary.ts"] }
})
