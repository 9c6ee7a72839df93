/**
 * What the published package holds, as npm packs it. The browser tests load the settings page from
 * this repository through a symlink, so they would still pass if the package stopped shipping it.
 */
import { expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { promisify } from 'node:util';
import { REPO_ROOT } from '../../scripts/lib/paths.js';
import { describeWithBuiltPlugin } from './support/built-plugin.js';

const execFileAsync = promisify(execFile);

/** npm's own time to read the package and the file tree. */
const PACK_TIMEOUT_MS = 60_000;

async function packedFiles(): Promise<string[]> {
  // Scripts stay off: a prepack build would empty dist/ under the test files that run the plugin meanwhile.
  const { stdout } = await execFileAsync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: REPO_ROOT, timeout: PACK_TIMEOUT_MS });
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return (pack?.files ?? []).map(({ path }) => path);
}

async function readJson(name: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(join(REPO_ROOT, name), 'utf8')) as Record<string, unknown>;
}

describeWithBuiltPlugin('the npm package', () => {
  it(
    'ships the plugin, its config schema and the settings page where config.schema.json points the Homebridge UI',
    async () => {
      const files = await packedFiles();
      const uiFolder = posix.normalize(String((await readJson('config.schema.json')).customUiPath));
      // Every module of the page's server, built, and every file of the page itself.
      const serverModules = (await readdir(join(REPO_ROOT, 'homebridge-ui'))).filter((name) => name.endsWith('.ts'));
      const pageFiles = await readdir(join(REPO_ROOT, 'homebridge-ui', 'public'));

      expect(uiFolder).toBe('dist/homebridge-ui');
      expect(serverModules).toContain('server.ts');
      expect(pageFiles).toEqual(expect.arrayContaining(['index.html', 'index.js']));
      expect(files).toEqual(
        expect.arrayContaining([
          'package.json',
          'config.schema.json',
          'dist/index.js',
          // Built, not in git: the config check Ajv compiled, which the plugin loads instead of compiling the schema.
          'dist/config/config-checks.generated.js',
          ...serverModules.map((name) => `${uiFolder}/${name.replace(/\.ts$/, '.js')}`),
          ...pageFiles.map((name) => `${uiFolder}/public/${name}`),
        ]),
      );
    },
    PACK_TIMEOUT_MS,
  );

  it('builds before it packs, so that dist/ is never missing or stale in the package', async () => {
    const { scripts } = (await readJson('package.json')) as { scripts: Record<string, string> };

    expect(scripts.prepack).toBe('npm run build');
  });
});
