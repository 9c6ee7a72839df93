/**
 * `npm run validators`: writes the plugin's compiled schema checks (scripts/lib/validators.ts) after
 * a change to config.schema.json or to the account service's answer schemas.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { generatedModules } from './lib/validators.js';
import { REPO_ROOT } from './lib/paths.js';

for (const { path, text } of generatedModules()) {
  await writeFile(join(REPO_ROOT, path), text);
  console.log(`Wrote ${path}`);
}
