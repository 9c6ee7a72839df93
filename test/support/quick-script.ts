/**
 * A script of scripts/ in its quick mode, run as `npm run <script> -- --quick` runs it, through tsx in
 * a process of its own, writing its results into a temporary folder.
 */
import { expect } from '@jest/globals';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/paths.js';

export interface QuickScript {
  /** scripts/<script>.ts, which writes <script>-results.json where --out says. */
  script: 'soak' | 'bench';
  /** Node's flags before the script, as its npm script passes them. */
  nodeFlags?: string[];
  /** Its arguments after --quick and before --out. */
  args?: string[];
  /** The test's timeout: the script is stopped ten seconds before, so the test still reports. */
  testTimeoutMs: number;
}

/** Runs the script; it must exit 0 (its output shown when it does not). Resolves with its output and the results it wrote. */
export async function runQuickScript({ script, nodeFlags = [], args = [], testTimeoutMs }: QuickScript) {
  const folder = await mkdtemp(join(tmpdir(), `doorbell-motion-${script}-test-`));
  try {
    const out = join(folder, `${script}-results.json`);
    const tsx = createRequire(import.meta.url).resolve('tsx/cli');
    const argv = [tsx, ...nodeFlags, join(REPO_ROOT, 'scripts', `${script}.ts`), '--quick', ...args, '--out', out];
    const { code, output } = await new Promise<{ code: number | null; output: string }>((resolve) => {
      // On timeout the script gets SIGTERM, on which the benchmark stops its Homebridge children first.
      execFile(process.execPath, argv, { cwd: REPO_ROOT, timeout: testTimeoutMs - 10_000, maxBuffer: 16 * 2 ** 20 }, (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, output: `${stdout}${stderr}` });
      });
    });
    expect({ code, output: code === 0 ? '' : output }).toEqual({ code: 0, output: '' });
    return { output, results: JSON.parse(await readFile(out, 'utf8')) };
  } finally {
    await rm(folder, { recursive: true, force: true });
  }
}
