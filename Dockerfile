# The gateway as a container: `docker build -t switchyard .`
# Build stage: install the workspace, bundle the server, build the web console, and keep only the
# server's production files and the console's static ones.
ARG NODE_VERSION=24.21.0
FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
RUN npm install --global --no-audit --no-fund pnpm@10.34.9
COPY . .
RUN pnpm install --frozen-lockfile \
 && pnpm --filter @switchyard/server build \
 && pnpm --filter @switchyard/console build \
 && pnpm --filter @switchyard/server deploy --prod --legacy /out

# Run stage: Node, the bundle, the server's npm dependencies and the built console (served at
# /ui/); no sources, no build tools.
FROM node:${NODE_VERSION}-bookworm-slim
# One malloc arena: about 9 MB less resident memory at idle (docs/production.md).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=1 \
    SWITCHYARD_HOST=0.0.0.0 \
    SWITCHYARD_PORT=8080 \
    SWITCHYARD_DATA_DIR=/data \
    SWITCHYARD_CONSOLE_DIR=/app/console
WORKDIR /app
COPY --from=build /out/package.json ./package.json
COPY --from=build /out/node_modules ./node_modules
COPY --from=build /out/dist ./dist
COPY --from=build /src/apps/console/dist ./console
RUN mkdir -p /data && chown 1000:1000 /data
# The base image's `node` user, by number: Kubernetes' runAsNonRoot can check a number, not a name
# (deploy/kubernetes runs the pod as 1000:1000 too).
USER 1000:1000
# The SQLite store (switchyard.db and its write-ahead log), the generated secret key and the interns' disks (the store unused with DATABASE_URL).
VOLUME ["/data"]
EXPOSE 8080
# Ready means the port is open (every route built) and the store answers.
HEALTHCHECK --interval=10s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.SWITCHYARD_PORT}/api/v1/health`).then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# No shell, no package manager: node is PID 1 and receives `docker stop`'s SIGTERM itself.
# The production command: Node's defaults, no V8 flags (docs/decisions.md, Memory sized to its container).
CMD ["node", "dist/main.mjs"]
