#!/usr/bin/env bash
# Installs into the local Maven repository what a project outside this checkout needs before the
# artifacts are on Maven Central: the BOM, outbox-spi, outbox-tck, the three stores, outbox-relay,
# both notification transports, outbox-spring-boot-starter, outbox-embedded-kafka and
# outbox-store-archetype (and the parent pom), without running tests or building javadoc. That is
# what examples/first-service, examples/spring-boot-service and a project generated from the
# archetype use, and what the documented paths add (docs/getting-started.md, docs/spring-boot.md,
# docs/extending.md);
# scripts/user-projects.sh runs this very script, so what it installs is what CI builds them with.
# For every module, run `mvn install` yourself.
#
#   bash scripts/install.sh                 # into ~/.m2/repository
#   bash scripts/install.sh -o -q           # extra arguments go to Maven
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
exec mvn -B -ntp install -DskipTests -Dmaven.javadoc.skip=true \
    -pl outbox-bom,outbox-spi,outbox-tck,outbox-store-jdbc,outbox-store-mongodb,outbox-store-dynamodb,outbox-relay,outbox-notify-redis,outbox-notify-postgres,outbox-spring-boot-starter,outbox-embedded-kafka,outbox-store-archetype -am "$@"
