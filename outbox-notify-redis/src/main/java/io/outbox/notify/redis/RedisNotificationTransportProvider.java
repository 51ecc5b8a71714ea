package io.outbox.notify.redis;

import com.google.auto.service.AutoService;
import io.outbox.notify.NotificationTransport;
import io.outbox.notify.NotificationTransportProvider;
import java.util.Map;
import org.apache.kafka.common.config.ConfigDef;

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
    public ConfigDef configDef() {
        return RedisTransportSettings.configDef();
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
