/**
 * Which Node.js the plugin refuses: older than 22.12, where JSON.parse cannot hand over a number's
 * source text; the words say which one it needs and which one it runs on.
 */
import { describe, expect, it } from '@jest/globals';
import { NODE_TOO_OLD_REASON, nodeVersionProblem } from '../../src/values/node-version.js';

describe('nodeVersionProblem', () => {
  it.each(['20.20.2', '18.0.0', '21.7.3', '22.0.0', '22.11.9'])('refuses Node.js %s, naming the Node.js it needs and this one', (version) => {
    expect(nodeVersionProblem(version)).toBe(`needs Node.js 22.12 or later; this is ${version}`);
  });

  it.each(['22.12.0', '22.22.1', '23.0.0', '24.4.1', '26.0.0'])('takes Node.js %s', (version) => {
    expect(nodeVersionProblem(version)).toBeUndefined();
  });

  it('gives the reason in the words every part of the plugin shows', () => {
    expect(NODE_TOO_OLD_REASON).toBe('this Node.js is too old');
  });

  it('takes the Node.js the tests run on', () => {
    expect(nodeVersionProblem()).toBeUndefined();
  });
});
