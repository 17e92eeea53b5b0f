# syntax=docker/dockerfile:1
# The image's steps are the same commands the README and CI run: `npm ci` (which builds
# through `prepare`) and `npm ci --omit=dev --ignore-scripts` for the runtime dependencies.

FROM node:24-slim AS build
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
# The operations endpoint (/healthz, /readyz, /metrics); the HEALTHCHECK below uses it.
ENV HTTP_PORT=8080
EXPOSE 8080
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
# DATA_DIR: the journal of ups in flight (mount a volume here to keep it across containers).
RUN mkdir -p /app/data && chown node:node /app/data
ENV DATA_DIR=/app/data
USER node
STOPSIGNAL SIGTERM
HEALTHCHECK --interval=30s --timeout=5s --start-period=60s --retries=3 CMD ["node", "dist/src/ops/healthcheck.js"]
# tini is PID 1: it forwards SIGTERM to node and reaps children.
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/src/app/main.js"]
