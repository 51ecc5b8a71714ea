package io.outbox.notify.postgres;

import com.google.auto.service.AutoService;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.NotificationTransportProvider;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

/** Registers the transport {@value #NAME}: settings as in {@link PostgresTransportSettings#fromMap(Map)}. */
@AutoService(NotificationTransportProvider.class)
public final class PostgresNotificationTransportProvider implements NotificationTransportProvider {

    /** The provider name. */
    public static final String NAME = "postgres";

    /** Creates the provider; {@link java.util.ServiceLoader} calls it. */
    public PostgresNotificationTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public ConfigDef configDef() {
        return PostgresTransportSettings.configDef();
    }

    @Override
    public void validate(Map<String, String> settings) {
        PostgresTransportSettings.fromMap(settings);
    }

    @Override
    public NotificationTransport create(Map<String, String> settings) {
        return new PostgresNotificationTransport(PostgresTransportSettings.fromMap(settings));
    }
}
