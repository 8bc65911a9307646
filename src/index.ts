/** The package's public face: what a host application may import. `tollgate/auth` and `tollgate/ai` are its halves. */
export * from './auth/index';
export * from './ai/index';
