// Writes the config file's JSON Schema (docs/switchyard.schema.json) from the core schema.
import * as Fs from "node:fs"
import * as NodePath from "node:path"
import * as ConfigJsonSchema from "../src/catalog/ConfigJsonSchema.ts"

const target = NodePath.join(import.meta.dirname, "..", "..", "..", ConfigJsonSchema.path)
Fs.writeFileSync(target, ConfigJsonSchema.text())
console.log(`wrote ${ConfigJsonSchema.path}`)
