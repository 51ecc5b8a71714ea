package io.outbox.tck;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Proxy;
import java.lang.reflect.Type;
import java.time.Duration;
import java.util.Collection;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Every call the kit makes into a store or a fixture runs here, on a thread of its own, and is
 * given up after a time limit: a store that blocks in a call fails the test's rule after that
 * limit, with the call named, instead of hanging the build. Exceptions of the call reach the
 * caller unchanged. A call given up keeps its (daemon) thread until it returns by itself.
 */
final class BoundedCalls {

    private static final AtomicInteger THREADS = new AtomicInteger();
    private static final ExecutorService CALLS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "outbox-kit-call-" + THREADS.incrementAndGet());
        t.setDaemon(true);
        return t;
    });

    private BoundedCalls() {
    }

    /**
     * Runs one call within a time limit.
     *
     * @param limit how long the call may take; positive
     * @param knob the setting that tunes the limit, named in the failure
     * @param what the call, as the failure names it
     * @param call the call
     * @param <T> the call's result type
     * @return the call's result
     * @throws Exception the call's own exception, unchanged
     * @throws AssertionError when the call did not return within the limit
     */
    static <T> T call(Duration limit, String knob, String what, Callable<T> call) throws Exception {
        Future<T> result = CALLS.submit(call);
        try {
            return result.get(limit.toNanos(), TimeUnit.NANOSECONDS);
        } catch (ExecutionException e) {
            throw rethrown(e.getCause());
        } catch (TimeoutException e) {
            result.cancel(true);
            throw new AssertionError(what + " did not return within " + limit.toMillis() + " ms (" + knob
                    + "): it blocks, or loops without end");
        } catch (InterruptedException e) {
            result.cancel(true);
            Thread.currentThread().interrupt();
            throw new CancellationException("interrupted while waiting for " + what);
        }
    }

    /**
     * A view of an object whose every method call goes through {@link #call}. What its methods
     * return is passed through, but for an interface of this project (or an {@link Optional} of
     * one, such as a store's capability), which gets a bounded view too.
     *
     * @param type the interface to view the object as
     * @param target the object; not null
     * @param limit the limit of each call
     * @param knob the setting that tunes the limit
     * @param <T> the interface
     * @return the bounded view
     */
    static <T> T bounded(Class<T> type, T target, Duration limit, String knob) {
        Objects.requireNonNull(target, "target must not be null");
        InvocationHandler handler = (proxy, method, args) -> invoke(target, method, args, limit, knob);
        return type.cast(Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler));
    }

    private static Object invoke(Object target, Method method, Object[] args, Duration limit, String knob)
            throws Exception {
        if (method.getDeclaringClass() == Object.class) {
            return method.invoke(target, args);
        }
        Object result = call(limit, knob, describe(method, args), () -> {
            try {
                return method.invoke(target, args);
            } catch (InvocationTargetException e) {
                throw rethrown(e.getCause());
            }
        });
        return boundedResult(method, result, limit, knob);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object boundedResult(Method method, Object result, Duration limit, String knob) {
        Class<?> type = method.getReturnType();
        if (result instanceof Optional<?> optional && optional.isPresent()
                && method.getGenericReturnType() instanceof ParameterizedType p) {
            Type element = p.getActualTypeArguments()[0];
            if (element instanceof Class<?> c && isOurs(c)) {
                return Optional.of(bounded((Class) c, optional.get(), limit, knob));
            }
        } else if (result != null && isOurs(type)) {
            return bounded((Class) type, result, limit, knob);
        }
        return result;
    }

    private static boolean isOurs(Class<?> type) {
        return type.isInterface() && type.getName().startsWith("io.outbox.");
    }

    private static String describe(Method method, Object[] args) {
        String arguments = args == null ? "" : Stream.of(args).map(BoundedCalls::describe)
                .collect(Collectors.joining(", "));
        return method.getDeclaringClass().getSimpleName() + "." + method.getName() + "(" + arguments + ")";
    }

    private static String describe(Object argument) {
        if (argument instanceof Collection<?> c && !(c.size() <= 8 && c.stream().allMatch(Integer.class::isInstance))) {
            return "[" + c.size() + " elements]";
        }
        return String.valueOf(argument);
    }

    private static Exception rethrown(Throwable cause) {
        if (cause instanceof Error error) {
            throw error;
        }
        return (Exception) cause;
    }
}
