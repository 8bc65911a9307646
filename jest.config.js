/** Unit specs sit beside their sources; end-to-end specs live in test/. */
module.exports = {
  testEnvironment: 'node',
  // Transpile only: `npm test` type-checks the sources through its build step, so Jest need not do it again.
  transform: { '^.+\\.ts$': ['ts-jest', { diagnostics: false }] },
  // The host-app test imports the package the way another app would: through its built entries.
  moduleNameMapper: { '^tollgate$': '<rootDir>/dist/src/index.js', '^tollgate/(auth|ai)$': '<rootDir>/dist/src/$1/index.js' },
  testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/test/**/*.e2e-spec.ts'],
  testTimeout: 30000,
};
