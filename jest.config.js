/** Unit specs sit beside their sources; end-to-end specs live in test/. */
const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
    },
    module: { type: 'commonjs' },
  },
];

module.exports = {
  testEnvironment: 'node',
  transform: { '^.+\\.ts$': swc },
  // The host-app test imports the package the way another app would: through its built entry.
  moduleNameMapper: { '^tollgate$': '<rootDir>/dist/src/index.js' },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testTimeout: 30000,
};
