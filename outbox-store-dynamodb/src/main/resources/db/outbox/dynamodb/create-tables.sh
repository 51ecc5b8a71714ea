#!/bin/sh
# Outbox DynamoDB store tables with the AWS CLI, as DynamoDbOutboxStore.createSchema() and
# DynamoDbInbox.createSchema() create them: on-demand billing, no secondary index, no stream and no
# TTL (pending messages never expire, rule S9). Table names from the environment, defaults as the
# store's; the inbox table only where consumers use DynamoDbInbox. A test creates the tables from
# these lines' arguments and compares them with createSchema()'s.
set -eu

aws dynamodb create-table --table-name "${OUTBOX_MESSAGES_TABLE:-outbox_messages}" --billing-mode PAY_PER_REQUEST --attribute-definitions '[{"AttributeName":"bucket","AttributeType":"N"},{"AttributeName":"seq","AttributeType":"N"}]' --key-schema '[{"AttributeName":"bucket","KeyType":"HASH"},{"AttributeName":"seq","KeyType":"RANGE"}]'
aws dynamodb create-table --table-name "${OUTBOX_COORDINATION_TABLE:-outbox_coordination}" --billing-mode PAY_PER_REQUEST --attribute-definitions '[{"AttributeName":"pk","AttributeType":"S"},{"AttributeName":"sk","AttributeType":"S"}]' --key-schema '[{"AttributeName":"pk","KeyType":"HASH"},{"AttributeName":"sk","KeyType":"RANGE"}]'
if [ -n "${OUTBOX_INBOX_TABLE:-}" ]; then
aws dynamodb create-table --table-name "${OUTBOX_INBOX_TABLE}" --billing-mode PAY_PER_REQUEST --attribute-definitions '[{"AttributeName":"messageId","AttributeType":"S"},{"AttributeName":"consumer","AttributeType":"S"}]' --key-schema '[{"AttributeName":"messageId","KeyType":"HASH"},{"AttributeName":"consumer","KeyType":"RANGE"}]'
fi
