package io.outbox.demo;

import java.security.SecureRandom;
import java.util.HexFormat;

/** Run ids: eight random hex digits, part of every table, collection, topic and relay name of a run. */
final class RunIds {

    private static final SecureRandom RANDOM = new SecureRandom();

    private RunIds() {
    }

    static String next() {
        byte[] bytes = new byte[4];
        RANDOM.nextBytes(bytes);
        return HexFormat.of().formatHex(bytes);
    }
}
