package io.outbox.demo;

import java.util.Arrays;
import java.util.Iterator;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** The stores the demo runs on, by their provider names. */
enum StoreKind {
    JDBC, MONGODB, DYNAMODB;

    /** The name on the command line and of the store's provider. */
    String cliName() {
        return name().toLowerCase(Locale.ROOT);
    }

    /** Reads {@code --store}, naming the valid values when the given one is not. */
    static final class Converter implements ITypeConverter<StoreKind> {
        @Override
        public StoreKind convert(String value) {
            for (StoreKind kind : values()) {
                if (kind.cliName().equalsIgnoreCase(value.trim())) {
                    return kind;
                }
            }
            throw new TypeConversionException("'" + value + "' is not a store; use one of " + String.join(", ",
                    new Names()));
        }
    }

    /** The valid values, for the help text. */
    static final class Names implements Iterable<String> {
        @Override
        public Iterator<String> iterator() {
            return Arrays.stream(values()).map(StoreKind::cliName).iterator();
        }
    }
}
