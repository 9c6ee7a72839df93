/** `npm run readme-settings`: writes README.md's table of settings from config.schema.json (scripts/lib/readme-settings.ts). */
import { writeFileSync } from 'node:fs';
import { README, readReadme, withSettingsTable } from './lib/readme-settings.js';

writeFileSync(README, withSettingsTable(readReadme()));
