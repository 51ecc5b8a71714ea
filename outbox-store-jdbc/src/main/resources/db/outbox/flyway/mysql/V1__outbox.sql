-- Outbox JDBC store schema, version 1, MySQL/MariaDB: the tables JdbcOutboxStore.createSchema() creates
-- at version 1, for Flyway (this file) and Liquibase (db/outbox/liquibase/outbox.changelog.xml runs it).
-- Placeholder outbox_prefix: the table prefix, as the store's tablePrefix(...) or the provider's
-- table.prefix (default outbox_). Tables go to the schema the migration tool runs in.
--
-- A released migration never changes: JdbcOutboxStore.createSchema() is the current schema and
-- these files are its history; a schema change comes as the next version (V2__...), and a test
-- compares the schema every migration makes with the one createSchema() makes.
--
-- messages: pending messages, deleted once the broker acknowledged them; id is the enqueue order
--   within a bucket, bucket the ordering bucket (rule E2), never negative (S8); times are epoch
--   milliseconds. leases: one row per bucket. relays: one heartbeat row per relay.
-- messages_dead: dead letters (capability C4). messages_failing: failing heads (C4), one row per bucket.

CREATE TABLE IF NOT EXISTS `${outbox_prefix}messages` (
    `id` BIGINT NOT NULL AUTO_INCREMENT,
    `bucket` INT NOT NULL,
    `message_id` CHAR(36) CHARACTER SET ascii NOT NULL,
    `topic` VARCHAR(249) CHARACTER SET ascii NOT NULL,
    `record_key` LONGBLOB NULL,
    `record_value` LONGBLOB NULL,
    `headers` LONGBLOB NOT NULL,
    `kafka_partition` INT NULL,
    `created_at` BIGINT NOT NULL,
    PRIMARY KEY (`bucket`, `id`),
    CONSTRAINT `${outbox_prefix}messages_bucket_ck` CHECK (`bucket` >= 0),
    KEY `${outbox_prefix}messages_id` (`id`)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS `${outbox_prefix}leases` (
    `bucket` INT NOT NULL,
    `owner` VARBINARY(512) NULL,
    `expires_at` BIGINT NOT NULL,
    PRIMARY KEY (`bucket`)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS `${outbox_prefix}relays` (
    `relay_id` VARBINARY(512) NOT NULL,
    `last_seen` BIGINT NOT NULL,
    PRIMARY KEY (`relay_id`)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS `${outbox_prefix}messages_dead` (
    `message_id` CHAR(36) CHARACTER SET ascii NOT NULL,
    `bucket` INTEGER NOT NULL,
    `topic` VARCHAR(249) CHARACTER SET ascii NOT NULL,
    `record_key` LONGBLOB NULL,
    `record_value` LONGBLOB NULL,
    `headers` LONGBLOB NOT NULL,
    `kafka_partition` INTEGER NULL,
    `created_at` BIGINT NOT NULL,
    `reason` VARCHAR(1000) CHARACTER SET utf8mb4 NOT NULL,
    `cause_class` VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL,
    `attempts` INTEGER NOT NULL,
    `first_failure_at` BIGINT NOT NULL,
    `last_failure_at` BIGINT NOT NULL,
    `relay_id` VARBINARY(512) NOT NULL,
    `dead_lettered_at` BIGINT NOT NULL,
    PRIMARY KEY (`message_id`)
) ENGINE=InnoDB;

CREATE TABLE IF NOT EXISTS `${outbox_prefix}messages_failing` (
    `bucket` INTEGER NOT NULL,
    `message_id` CHAR(36) CHARACTER SET ascii NOT NULL,
    `reason` VARCHAR(1000) CHARACTER SET utf8mb4 NOT NULL,
    `cause_class` VARCHAR(255) CHARACTER SET utf8mb4 NOT NULL,
    `attempts` INTEGER NOT NULL,
    `first_failure_at` BIGINT NOT NULL,
    `last_failure_at` BIGINT NOT NULL,
    `relay_id` VARBINARY(512) NOT NULL,
    PRIMARY KEY (`bucket`)
) ENGINE=InnoDB;
