package io.outbox.notify.redis;

import com.google.auto.service.AutoService;
import io.outbox.relay.NotificationTransport;
import io.outbox.relay.NotificationTransportProvider;
import java.util.Map;

/** Registers the transport {@value #NAME}: settings as in {@link RedisTransportSettings#fromMap(Map)}. */
@AutoService(NotificationTransportProvider.class)
public final class RedisNotificationTransportProvider implements NotificationTransportProvider {

    /** The provider name. */
    public static final String NAME = "redis";

    /** Creates the provider; {@link java.util.ServiceLoader} calls it. */
    public RedisNotificationTransportProvider() {
    }

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public Map<String, String> settings() {
        return RedisTransportSettings.DOCUMENTATION;
    }

    @Override
    public void validate(Map<String, String> settings) {
        RedisTransportSettings.fromMap(settings);
    }

    @Override
    public NotificationTransport create(Map<String, String> settings) {
        return new RedisNotificationTransport(RedisTransportSettings.fromMap(settings));
    }
}
