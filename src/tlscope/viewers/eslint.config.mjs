// npm run lint: the client (lib/), the explorer, the vanilla template and the gates' own scripts. Correctness rules
// (eslint's recommended set and a few more), and the function size the Python side enforces
// (tests/test_layout.py: no function longer than 60 lines). Types are tsc's (tsconfig.json).
import js from '@eslint/js';
import globals from 'globals';

export default [
  // The React template is TypeScript with its own tsc and build (templates/react/package.json).
  { ignores: ['node_modules/', 'templates/react/', 'lib/types/'] },
  js.configs.recommended,
  {
    files: ['lib/**/*.js', 'explorer/**/*.js', 'templates/vanilla/**/*.js'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.browser } },
  },
  {
    // prefetch.js is a classic script: it runs before the module graph (explorer/index.html).
    files: ['explorer/prefetch.js'],
    languageOptions: { sourceType: 'script' },
  },
  {
    files: ['*.mjs'],
    languageOptions: { ecmaVersion: 2023, sourceType: 'module', globals: { ...globals.node } },
  },
  {
    rules: {
      'max-lines-per-function': ['error', { max: 60, skipBlankLines: false, skipComments: false }],
      'no-unused-vars': ['error', { args: 'after-used', argsIgnorePattern: '^_', caughtErrors: 'none' }],
      'no-shadow': 'error',
      // Used before its declaration in the same scope (the temporal dead zone); a function using a
      // module constant declared below it runs after the module is evaluated.
      'no-use-before-define': ['error', { functions: false, classes: false, variables: false }],
      'no-var': 'error',
      'prefer-const': 'error',
      eqeqeq: ['error', 'always'],
      'no-implicit-coercion': ['error', { allow: ['!!'] }],
      'no-param-reassign': 'error',
      'no-promise-executor-return': 'error',
      'no-unmodified-loop-condition': 'error',
      'no-unreachable-loop': 'error',
      'no-constructor-return': 'error',
      'no-self-compare': 'error',
      'no-template-curly-in-string': 'error',
      'require-atomic-updates': 'off',
      'array-callback-return': 'error',
      'consistent-return': 'off',
      'default-case-last': 'error',
      'no-new-wrappers': 'error',
      'no-eval': 'error',
      'no-implied-eval': 'error',
      'no-new-func': 'error',
      'no-script-url': 'error',
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: ['*.mjs'],
    rules: { 'no-console': 'off' },
  },
];
