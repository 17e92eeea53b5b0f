# syntax=docker/dockerfile:1
# The image's steps are the same commands the README and CI run: `npm ci` (which builds
# through `prepare`) and `npm ci --omit=dev --ignore-scripts` for the runtime dependencies.
# better-sqlite3 (the store's SQLite engine) is a native module: `npm ci` in the build stage
# downloads a prebuilt one or compiles it (hence python3, make and g++), and the final image
# takes that one file from there, the runtime dependencies being installed without scripts.

FROM node:24-slim AS build
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY commands ./commands
COPY test/emulator ./test/emulator
COPY test/discord ./test/discord
RUN npm ci --no-audit --no-fund

FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund

FROM node:24-slim
RUN apt-get update \
  && apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*
ENV NODE_ENV=production
EXPOSE 8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
# Built in the build stage on the same base image, so for the same Node.js.
COPY --from=build /app/node_modules/better-sqlite3/build/Release/better_sqlite3.node \
  ./node_modules/better-sqlite3/build/Release/better_sqlite3.node
COPY --from=build /app/dist ./dist
COPY package.json ./
# The image's defaults go in .env.defaults, which the bot and the HEALTHCHECK both read under the
# environment, rather than in ENV lines: `HTTP_PORT=` in a `docker run --env-file` would replace an
# ENV line with nothing (and the HEALTHCHECK would fail), while an empty variable falls through to
# this file. HTTP_PORT: the operations endpoint (/healthz, /readyz, /metrics) the HEALTHCHECK uses;
# HTTP_HOST: on every address of the container (outside it the bot's default is 127.0.0.1), so that
# the orchestrator's probes and a Prometheus scraper reach it through the published port.
# DATA_DIR: what the bot keeps across restarts (the store's SQLite file when DATABASE_URL is
# unset); mount a volume there to keep it across containers.
RUN printf 'HTTP_PORT=8080\nHTTP_HOST=0.0.0.0\nDATA_DIR=/app/data\n' > .env.defaults \
  && mkdir -p /app/data && chown node:node /app/data
USER node
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/src/ops/healthcheck.js"]
# tini is PID 1: it forwards SIGTERM to node and reaps children.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/app/main.js"]
