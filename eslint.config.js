import eslint from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  // The build's output, and what `npm run validators` writes (Ajv's code as it wrote it, the schema as a type): none of it is in git.
  { ignores: ['dist/', 'node_modules/', '.demo/', '.cache/', 'coverage/', '**/*.generated.*'] },
  eslint.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'error',
    },
  },
  {
    // The settings page's server: the Homebridge UI shows its output in its log.
    files: ['homebridge-ui/server.ts'],
    rules: { 'no-console': 'off' },
  },
  {
    // The settings page's script runs in the Homebridge UI's frame, which provides `homebridge`.
    files: ['homebridge-ui/public/**/*.js'],
    languageOptions: {
      sourceType: 'module',
      globals: { window: 'readonly', document: 'readonly', homebridge: 'readonly' },
    },
  },
  {
    // The simulator and the developer scripts are command-line programs: printing is their job.
    files: ['simulator/main.ts', 'simulator/cli.ts', 'scripts/**/*.ts'],
    rules: { 'no-console': 'off' },
  },
);
