package io.outbox.notify.postgres;

import com.google.auto.service.AutoService;
import io.outbox.relay.NotificationTransport;
import io.outbox.relay.NotificationTransportProvider;
import java.util.Map;

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
    public Map<String, String> settings() {
        return PostgresTransportSettings.DOCUMENTATION;
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
