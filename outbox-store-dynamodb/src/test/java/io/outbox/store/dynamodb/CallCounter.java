package io.outbox.store.dynamodb;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;

/** Counts the DynamoDB calls a client makes, by operation (one per API call, retries not counted). */
final class CallCounter implements ExecutionInterceptor {

    private final Map<String, AtomicInteger> calls = new ConcurrentHashMap<>();

    @Override
    public void beforeExecution(Context.BeforeExecution context, ExecutionAttributes attributes) {
        String operation = context.request().getClass().getSimpleName().replaceFirst("Request$", "");
        calls.computeIfAbsent(operation, k -> new AtomicInteger()).incrementAndGet();
    }

    /** The calls since the last reset, by operation name, sorted. */
    Map<String, Integer> calls() {
        Map<String, Integer> copy = new TreeMap<>();
        calls.forEach((operation, count) -> copy.put(operation, count.get()));
        return copy;
    }

    void reset() {
        calls.clear();
    }
}
