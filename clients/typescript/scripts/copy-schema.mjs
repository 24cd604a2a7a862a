// tsc emits no .d.ts it did not compile: the generated src/schema.d.ts goes into dist/ as it is.
import { copyFileSync } from 'node:fs'

copyFileSync(new URL('../src/schema.d.ts', import.meta.url), new URL('../dist/schema.d.ts', import.meta.url))
