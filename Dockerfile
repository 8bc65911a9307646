# syntax=docker/dockerfile:1
# Build stage: the full dependency tree and the TypeScript compile; dev dependencies are pruned afterwards.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json nest-cli.json ./
COPY config ./config
COPY src ./src
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

# Runtime stage: production dependencies and compiled output only, owned by root and read-only to the
# unprivileged `node` user, so the container runs with a read-only root filesystem (only /tmp writable).
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/config/tollgate.schema.json /app/config/tollgate.example.yaml ./config/
COPY bin ./bin
USER node
EXPOSE 3000
# Node handles SIGTERM itself: in-flight requests drain within TOLLGATE_SHUTDOWN_TIMEOUT (see docs/operations.md).
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=15s --timeout=3s --start-period=10s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+(process.env.TOLLGATE_BASE_PATH||'')+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# Mount a configuration at /app/config/tollgate.yaml (read when present) or point TOLLGATE_CONFIG at one.
CMD ["node", "dist/src/main.js"]
