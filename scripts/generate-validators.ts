/**
 * `npm run validators`: writes the compiled config check and the schema's type into src/config/
 * (scripts/lib/validators.ts), where git ignores them; the build copies them into dist/.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generatedModules } from './lib/validators.js';
import { REPO_ROOT } from './lib/paths.js';

for (const { path, text } of generatedModules()) {
  await writeFile(join(REPO_ROOT, path), text);
}
