package io.outbox.tck;

import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Finds the {@link KitRule} of kit tests, and orders rule ids. Stateless. */
final class KitRules {

    /** A kit test method and its rule. */
    record KitTest(Method method, KitRule rule) {
        String name() {
            return method.getName();
        }
    }

    private static final Pattern RULE_ID = Pattern.compile("([A-Za-z]+)(\\d*)(\\w*)");

    /** Rule ids in the order of the contract: S, E, R, C, I, then the rest. */
    static final Comparator<String> ORDER = Comparator.comparingInt(KitRules::family)
            .thenComparingInt(KitRules::number).thenComparing(Comparator.naturalOrder());

    private KitRules() {
    }

    /**
     * The rule of a test method, looked up on the class that declares it with {@code @KitRule}: a
     * subclass may override a kit test (to disable it, say) without repeating the annotation.
     *
     * @param testClass the class the test ran in
     * @param methodName the test method's name
     * @return the test and its rule, or empty when it is not a kit test
     */
    static Optional<KitTest> find(Class<?> testClass, String methodName) {
        for (Class<?> c = testClass; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                if (m.getName().equals(methodName) && m.getParameterCount() == 0 && m.isAnnotationPresent(KitRule.class)) {
                    return Optional.of(new KitTest(m, m.getAnnotation(KitRule.class)));
                }
            }
        }
        return Optional.empty();
    }

    /**
     * Every kit test of a kit class and its superclasses, by rule (in {@link #ORDER}) and then by name.
     *
     * @param kit the kit class
     * @return the tests
     */
    static List<KitTest> tests(Class<?> kit) {
        Map<String, KitTest> byName = new LinkedHashMap<>();
        for (Class<?> c = kit; c != null && c != Object.class; c = c.getSuperclass()) {
            for (Method m : c.getDeclaredMethods()) {
                KitRule rule = m.getAnnotation(KitRule.class);
                if (rule != null) {
                    byName.putIfAbsent(m.getName(), new KitTest(m, rule));
                }
            }
        }
        List<KitTest> tests = new ArrayList<>(byName.values());
        tests.sort(Comparator.comparing((KitTest t) -> t.rule().id(), ORDER).thenComparing(KitTest::name));
        return tests;
    }

    private static int family(String id) {
        int at = "SERCI".indexOf(Character.toUpperCase(id.charAt(0)));
        return Character.isUpperCase(id.charAt(0)) && at >= 0 ? at : 9;
    }

    private static int number(String id) {
        Matcher m = RULE_ID.matcher(id);
        return m.matches() && !m.group(2).isEmpty() ? Integer.parseInt(m.group(2)) : 0;
    }
}
