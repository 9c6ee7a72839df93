const shared = {
  preset: 'ts-jest/presets/default-esm',
  testEnvironment: 'node',
  moduleNameMapper: {
    '^(\\.{1,2}/.*)\\.js$': '$1',
    // The settings page's server imports the plugin's modules as `#plugin/...`: tests use their source.
    '^#plugin/(.*)\\.js$': '<rootDir>/src/$1',
  },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true }] },
};

/** @type {import('jest').Config} */
export default {
  // The e2e files spend most of their time waiting on child processes, so two workers pay off even on
  // two cores.
  maxWorkers: 2,
  testTimeout: 20000,
  projects: [
    {
      ...shared,
      displayName: 'unit',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['/test/e2e/'],
    },
    {
      ...shared,
      displayName: 'e2e',
      roots: ['<rootDir>/test/e2e'],
      testMatch: ['**/*.e2e.test.ts'],
    },
  ],
};
