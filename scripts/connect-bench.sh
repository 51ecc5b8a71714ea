#!/usr/bin/env bash
# The Kafka Connect throughput line (docs/kafka-connect.md): the connector's drain rate beside the
# standalone relay's on the same broker, machine and messages, each with its ratio to a plain
# idempotent producer. Runs io.outbox.connect.ConnectThroughputBench through scripts/test.sh (which
# starts PostgreSQL if it is down) and prints its result line.
#
#   scripts/connect-bench.sh                         # 50,000 messages
#   scripts/connect-bench.sh -Dbench.messages=20000  # extra arguments go to Maven
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bash "$ROOT/scripts/test.sh" -pl outbox-kafka-connect -am -Dtest=none -Dsurefire.failIfNoSpecifiedTests=false \
    -Dit.test=ConnectThroughputBench -Dfailsafe.failIfNoSpecifiedTests=false "$@"
grep -h '^ConnectThroughputBench:' "$ROOT"/outbox-kafka-connect/target/failsafe-reports/*ConnectThroughputBench*-output.txt
