/**
 * The config and the account service's answers are checked by code Ajv compiled when it was written
 * (scripts/lib/validators.ts, `npm run validators`). That code must be what Ajv compiles from the
 * schemas today, and leaving the form's words out of what is compiled must change no outcome.
 */
import { describe, expect, it } from '@jest/globals';
import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO_ROOT } from '../../scripts/lib/paths.js';
import { configAjv, configSchema, generatedModules, withoutAnnotations } from '../../scripts/lib/validators.js';
import { platformBlock } from '../support/config-arbitrary.js';
import { propertyRuns } from '../support/property-runs.js';

describe('the compiled checks in the repository', () => {
  it.each(generatedModules().map(({ path, text }) => [path, text]))('%s is what `npm run validators` writes today', (path, text) => {
    const inRepository = readFileSync(join(REPO_ROOT, path), 'utf8');
    // Not toBe: a stale module would print two copies of forty kilobytes instead of what to do.
    expect(inRepository === text ? 'up to date' : `stale: run npm run validators (${path})`).toBe('up to date');
  });

  it('would be stale after any change to the schema: a changed pattern compiles to other code', () => {
    const schema = configSchema();
    const changed = structuredClone(schema);
    changed.properties.account.properties.country.pattern = '^[A-Z]{3}$';
    const configModule = (modules: ReturnType<typeof generatedModules>) => modules.find(({ path }) => path.endsWith('config-checks.generated.js'))?.text;
    expect(configModule(generatedModules(changed))).not.toBe(configModule(generatedModules(schema)));
  });
});

describe('the schema compiled without the words of the form', () => {
  it('keeps every rule: the same outcome and the same errors as config.schema.json itself, for any block', () => {
    const full = configAjv().compile(configSchema());
    const compiled = configAjv().compile(withoutAnnotations(configSchema()));
    const outcome = (check: typeof full, block: unknown) => {
      const data = structuredClone(block);
      const valid = check(data);
      return { valid, data, errors: (check.errors ?? []).map(({ keyword, instancePath, schemaPath }) => `${keyword} ${instancePath} ${schemaPath}`) };
    };
    fc.assert(
      fc.property(platformBlock({ ownPort: 47850 }), ({ block }) => {
        expect(outcome(compiled, block)).toEqual(outcome(full, block));
      }),
      propertyRuns(2_000),
    );
  });

  it('has none of those words left, at any depth', () => {
    const text = JSON.stringify(withoutAnnotations(configSchema()));
    expect(JSON.stringify(configSchema())).toMatch(/"(title|description|placeholder)"/);
    expect(text).not.toMatch(/"(title|description|placeholder|\$comment|condition|functionBody|titleMap|x-schema-form)"/);
    expect(text).toMatch(/"x-address"/);
  });
});
