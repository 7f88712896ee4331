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
