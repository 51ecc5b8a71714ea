package io.outbox.demo;

import java.io.PrintWriter;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.sql.Statement;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAdder;
import java.util.logging.Logger;
import javax.sql.DataSource;

/**
 * Counts what a JDBC store asks of its database, for the benchmark: statements executed (each
 * statement of a JDBC batch counting once), calls ({@code execute*} calls, a batch counting once:
 * the round trips the driver makes), rows read and bytes read. It sits under the
 * connection pool: {@link #dataSource} opens physical connections with {@link DriverManager} and
 * wraps them, so the pool's own checks are not counted and the store runs unchanged.
 *
 * <p>Bytes read are the sizes of the values the store took from its result sets: a byte array's
 * length, a string's length in characters (the store's strings are ASCII topic names and ids), 8
 * for a {@code long}, 4 for an {@code int}, 16 for a {@code UUID}. They are what the store
 * received, not the bytes on the wire (which add the protocol's framing). On PostgreSQL it also
 * records each physical connection's backend pid ({@code pg_backend_pid()}, read once per
 * connection and not counted), so the benchmark can read those backends' CPU time.
 *
 * <p>Thread-safe: counters are {@link LongAdder}s.
 */
final class JdbcMeter {

    private final LongAdder statements = new LongAdder();
    private final LongAdder calls = new LongAdder();
    private final LongAdder rows = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final Map<String, LongAdder> byKind = new ConcurrentHashMap<>();
    private final Set<Long> backendPids = ConcurrentHashMap.newKeySet();
    private final List<String> tables;
    private final int commonPrefix;

    /**
     * @param tables the outbox's table names, to say which table a statement touches; their common
     *     prefix (the run's) is left out of the statements' kinds
     */
    JdbcMeter(List<String> tables) {
        this.tables = List.copyOf(tables);
        int prefix = tables.isEmpty() ? 0 : tables.get(0).length();
        for (String t : tables) {
            int i = 0;
            while (i < Math.min(prefix, t.length()) && t.charAt(i) == tables.get(0).charAt(i)) {
                i++;
            }
            prefix = i;
        }
        this.commonPrefix = tables.size() > 1 ? prefix : 0;
    }

    /**
     * What was counted so far.
     *
     * @param statements statements executed, each of a batch counting once
     * @param calls {@code execute*} calls (round trips), a batch counting once
     * @param rows rows read
     * @param bytes bytes read (see the class comment)
     * @param byKind statements by their first keyword and the outbox table they name, e.g.
     *     {@code "SELECT messages"}
     */
    record Counts(long statements, long calls, long rows, long bytes, Map<String, Long> byKind) {

        /** What was counted between {@code earlier} and this. */
        Counts minus(Counts earlier) {
            Map<String, Long> kinds = new TreeMap<>(byKind);
            earlier.byKind.forEach((k, v) -> kinds.merge(k, -v, Long::sum));
            kinds.values().removeIf(v -> v == 0);
            return new Counts(statements - earlier.statements, calls - earlier.calls, rows - earlier.rows,
                    bytes - earlier.bytes, Map.copyOf(kinds));
        }

        /** "3 SELECT messages, 1 DELETE messages" with each count divided by {@code per}. */
        String describeKinds(long per, String unit) {
            StringBuilder text = new StringBuilder();
            new TreeMap<>(byKind).forEach((kind, n) -> text.append(text.length() == 0 ? "" : ", ")
                    .append(String.format(Locale.ROOT, "%.4f %s", (double) n / per, kind)));
            return text.length() == 0 ? "none" : text + " " + unit;
        }
    }

    /** The counts so far. */
    Counts counts() {
        Map<String, Long> kinds = new TreeMap<>();
        byKind.forEach((k, v) -> kinds.put(k, v.sum()));
        return new Counts(statements.sum(), calls.sum(), rows.sum(), bytes.sum(), Map.copyOf(kinds));
    }

    /** The PostgreSQL backend pids of the connections opened so far; empty on other databases. */
    Set<Long> backendPids() {
        return Set.copyOf(backendPids);
    }

    /**
     * "SELECT messages": the statement's first keyword and the first of the outbox's tables it
     * names ("other" when none).
     */
    String kind(String sql) {
        String trimmed = sql.stripLeading();
        while (trimmed.startsWith("(")) {
            trimmed = trimmed.substring(1).stripLeading();
        }
        int space = trimmed.indexOf(' ');
        String keyword = (space < 0 ? trimmed : trimmed.substring(0, space)).toUpperCase(Locale.ROOT);
        String lower = sql.toLowerCase(Locale.ROOT);
        String table = "other";
        int first = Integer.MAX_VALUE;
        for (String t : tables) {
            int at = lower.indexOf(t.toLowerCase(Locale.ROOT));
            if (at >= 0 && at < first) {
                first = at;
                table = t.substring(commonPrefix);
            }
        }
        return keyword + " " + table;
    }

    /**
     * A data source that opens counted physical connections to {@code url}, for a pool to draw
     * from ({@code HikariConfig.setDataSource}).
     *
     * @param url the JDBC URL
     * @param user the user, or null
     * @param password the password, or null
     */
    DataSource dataSource(String url, String user, String password) {
        return new Counted(url, user, password);
    }

    private void executed(String sql, int statementsInCall) {
        calls.increment();
        statements.add(statementsInCall);
        byKind.computeIfAbsent(kind(sql), k -> new LongAdder()).add(statementsInCall);
    }

    private void read(Object value) {
        if (value instanceof byte[] b) {
            bytes.add(b.length);
        } else if (value instanceof String s) {
            bytes.add(s.length());
        } else if (value instanceof Long) {
            bytes.add(8);
        } else if (value instanceof Integer) {
            bytes.add(4);
        } else if (value instanceof UUID) {
            bytes.add(16);
        }
    }

    private final class Counted implements DataSource {
        private final String url;
        private final String user;
        private final String password;
        private PrintWriter logWriter;
        private int loginTimeout;

        Counted(String url, String user, String password) {
            this.url = url;
            this.user = user;
            this.password = password;
        }

        @Override
        public Connection getConnection() throws SQLException {
            return getConnection(user, password);
        }

        @Override
        public Connection getConnection(String username, String pass) throws SQLException {
            Connection physical = username == null ? DriverManager.getConnection(url)
                    : DriverManager.getConnection(url, username, pass);
            if (url.startsWith("jdbc:postgresql:")) {
                try (Statement s = physical.createStatement(); ResultSet r = s.executeQuery("SELECT pg_backend_pid()")) {
                    r.next();
                    backendPids.add(r.getLong(1));
                }
            }
            return proxy(Connection.class, physical, null);
        }

        @Override
        public PrintWriter getLogWriter() {
            return logWriter;
        }

        @Override
        public void setLogWriter(PrintWriter out) {
            logWriter = out;
        }

        @Override
        public void setLoginTimeout(int seconds) {
            loginTimeout = seconds;
        }

        @Override
        public int getLoginTimeout() {
            return loginTimeout;
        }

        @Override
        public Logger getParentLogger() throws SQLFeatureNotSupportedException {
            throw new SQLFeatureNotSupportedException("no parent logger");
        }

        @Override
        public <T> T unwrap(Class<T> type) throws SQLException {
            throw new SQLException("not a wrapper of " + type.getName());
        }

        @Override
        public boolean isWrapperFor(Class<?> type) {
            return false;
        }
    }

    /** Wraps a connection, statement or result set; {@code sql} is a prepared statement's text. */
    private <T> T proxy(Class<T> type, T target, String sql) {
        int[] batched = {0}; // statements added to this statement's batch; used by one thread at a time
        InvocationHandler handler = (self, method, args) -> invoke(target, method, args, sql, batched);
        return type.cast(Proxy.newProxyInstance(JdbcMeter.class.getClassLoader(), new Class<?>[] {type}, handler));
    }

    private Object invoke(Object target, Method method, Object[] args, String sql, int[] batched) throws Throwable {
        String name = method.getName();
        if (target instanceof Connection && (name.equals("unwrap") || name.equals("isWrapperFor"))) {
            return call(target, method, args); // the driver's own connection, for its extensions
        }
        if (target instanceof Statement) {
            if (name.equals("addBatch")) {
                batched[0]++;
            } else if (name.equals("clearBatch")) {
                batched[0] = 0;
            } else if (name.equals("executeBatch") || name.equals("executeLargeBatch")) {
                executed(sql == null ? "" : sql, batched[0]);
                batched[0] = 0;
            } else if (name.startsWith("execute")) {
                String text = args != null && args.length > 0 && args[0] instanceof String s ? s : sql;
                executed(text == null ? "" : text, 1);
            }
        }
        Object result = call(target, method, args);
        if (result instanceof PreparedStatement p && target instanceof Connection) {
            return proxy(PreparedStatement.class, p, (String) args[0]);
        }
        if (result instanceof Statement s && target instanceof Connection) {
            return proxy(Statement.class, s, null);
        }
        if (result instanceof ResultSet r && target instanceof Statement) {
            return proxy(ResultSet.class, r, null);
        }
        if (target instanceof ResultSet) {
            if (name.equals("next") && Boolean.TRUE.equals(result)) {
                rows.increment();
            } else if (name.startsWith("get") && args != null && args.length >= 1) {
                read(result);
            }
        }
        return result;
    }

    private static Object call(Object target, Method method, Object[] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw e.getCause();
        }
    }
}
