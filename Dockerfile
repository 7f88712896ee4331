# syntax=docker/dockerfile:1
# Build: compile TypeScript with the dev dependencies, then ship production dependencies only.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build && npm prune --omit=dev

FROM node:22-bookworm-slim
# The release's version: package.json's, written here by hack/set-version.ts (test/unit/version.test.ts checks
# they agree); a build may still pass --build-arg VERSION=… for a build of its own.
ARG VERSION=0.1.0
LABEL org.opencontainers.image.title="policy-sync" \
      org.opencontainers.image.description="Hub-to-spoke multicluster sync of Gateway API policies over Open Cluster Management ManifestWorks" \
      org.opencontainers.image.version="${VERSION}" \
      org.opencontainers.image.source="https://github.com/Kuadrant/policy-sync" \
      org.opencontainers.image.url="https://github.com/Kuadrant/policy-sync" \
      org.opencontainers.image.vendor="Kuadrant" \
      org.opencontainers.image.licenses="Apache-2.0"
WORKDIR /app
ENV NODE_ENV=production
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY package.json ./
COPY bin ./bin
USER node
# A small young generation: most of what the controllers allocate (list pages, watch events, desired works)
# dies young, and a smaller nursery promotes less of it (with src/runtime/gctuning.ts: restart peak RSS at
# 10k works 197 → ~136 MiB). hack/bench runs the controller with the flags given here.
ENTRYPOINT ["node", "--max-semi-space-size=4", "/app/bin/policy-sync.js"]
