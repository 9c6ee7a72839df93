/**
 * What the settings page's server may import. Only server.ts knows the Homebridge UI; the rest runs
 * in tests without it. The plugin's modules come in as `#plugin/...`, which resolves to dist/ once
 * built: a relative path into src/ would work in tests and break in the built package.
 */
import { describe, expect, it } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const UI_SERVER = fileURLToPath(new URL('../../homebridge-ui/', import.meta.url));

const files = readdirSync(UI_SERVER).filter((name) => name.endsWith('.ts'));

function importsOf(name: string): string[] {
  const text = readFileSync(join(UI_SERVER, name), 'utf8');
  return [...text.matchAll(/^(?:import|export)\b[^;]*?\bfrom\s+'([^']+)'/gms)].map((match) => match[1] as string);
}

describe('homebridge-ui/', () => {
  it('has its server and the modules it uses', () => {
    expect(files).toEqual(expect.arrayContaining(['server.ts', 'settings-requests.ts']));
  });

  it.each(files)('%s: the Homebridge UI only in server.ts, the plugin only as #plugin/..., no Homebridge', (name) => {
    const imports = importsOf(name);
    const homebridge = imports.filter((specifier) => /^(homebridge|@homebridge\/)/.test(specifier));
    expect(homebridge).toEqual(name === 'server.ts' ? ['@homebridge/plugin-ui-utils'] : []);
    expect(imports.filter((specifier) => specifier.startsWith('.') && !/^\.\/[a-z-]+\.js$/.test(specifier))).toEqual([]);
  });
});
