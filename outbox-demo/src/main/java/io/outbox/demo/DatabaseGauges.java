package io.outbox.demo;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.HashSet;
import java.util.Locale;
import java.util.OptionalInt;
import java.util.Properties;
import java.util.Set;

/**
 * What the sustained run reads from the database each interval, on a connection of its own: the
 * outbox messages table's size and its indexes' size, and what the database has not cleaned up
 * yet behind the deleted rows (PostgreSQL: dead tuples and autovacuum runs from
 * {@code pg_stat_user_tables}; MariaDB: the InnoDB history list length, the purge lag). And the
 * probe that reads the database's CPU. A store without such figures reads as {@link Reading#NONE}.
 * Used by one thread.
 */
abstract class DatabaseGauges implements AutoCloseable {

    private final CpuProbe cpu;

    DatabaseGauges(CpuProbe cpu) {
        this.cpu = cpu;
    }

    /** The application name the run's PostgreSQL connections carry, so that their backends can be found. */
    static final String APPLICATION_NAME_PREFIX = "outbox-sustained-";

    /**
     * One reading; -1 where not measured.
     *
     * @param tableBytes the messages table's size in bytes (PostgreSQL with TOAST; MariaDB and H2 an estimate)
     * @param indexBytes its indexes' size in bytes
     * @param deadTuples PostgreSQL: dead row versions in the messages table
     * @param autovacuums PostgreSQL: autovacuum runs on the messages table so far
     * @param purgeLag MariaDB: the InnoDB history list length (undo logs not yet purged, whole server)
     */
    record Reading(long tableBytes, long indexBytes, long deadTuples, long autovacuums, long purgeLag) {
        static final Reading NONE = new Reading(-1, -1, -1, -1, -1);
    }

    /** Reads the figures now. */
    abstract Reading read();

    /** The database's CPU probe. */
    final CpuProbe cpu() {
        return cpu;
    }

    /** Names the cleanup figure this database reports, for the header: "dead tuples", "purge lag" or "-". */
    abstract String cleanupName();

    @Override
    public void close() {
    }

    /**
     * The gauges for a run's database.
     *
     * @param kind the store
     * @param url the JDBC URL the run uses; null for the embedded H2 (which, as any in-memory H2, has no
     *     sizes to read)
     * @param user the user or null
     * @param password the password or null
     * @param messagesTable the messages table's name, as created
     * @param applicationName the application name the run's PostgreSQL connections carry
     * @param dbPid the database server's process, when given on the command line; null to find it
     * @param proc where CPU times are read
     */
    static DatabaseGauges open(StoreKind kind, String url, String user, String password, String messagesTable,
                               String applicationName, Long dbPid, ProcCpu proc) {
        if (kind != StoreKind.JDBC) {
            return new None(dbPid == null ? CpuProbe.none("not measured (pass --db-pid)")
                    : CpuProbe.tree(proc, dbPid, "database process " + dbPid + " (--db-pid)"));
        }
        if (url == null || url.startsWith("jdbc:h2:mem:")) {
            // An in-memory H2 has no pages on disk: DISK_SPACE_USED reads 0 whatever the table holds.
            return new None(CpuProbe.inBench("H2 in this process: counted in the bench process"));
        }
        try {
            Properties props = new Properties();
            if (user != null) {
                props.setProperty("user", user);
            }
            if (password != null) {
                props.setProperty("password", password);
            }
            Connection c = DriverManager.getConnection(url, props);
            c.setAutoCommit(true);
            if (url.startsWith("jdbc:postgresql:")) {
                c.createStatement().execute("SET application_name = 'outbox-sustained-gauges'");
                return new Postgres(c, messagesTable.toLowerCase(Locale.ROOT), applicationName, dbPid, proc, url);
            }
            if (url.startsWith("jdbc:mariadb:")) {
                return new MariaDb(c, messagesTable, dbPid, proc, url);
            }
            CpuProbe h2Cpu = dbPid == null ? CpuProbe.none("not measured (pass --db-pid)")
                    : CpuProbe.tree(proc, dbPid, "database process " + dbPid + " (--db-pid)");
            return new H2(c, messagesTable.toUpperCase(Locale.ROOT), h2Cpu);
        } catch (SQLException e) {
            throw new IllegalStateException("cannot open the gauges' connection: " + e.getMessage(), e);
        }
    }

    /** The URL with the application name PostgreSQL shows for its connections; other URLs unchanged. */
    static String withApplicationName(String url, String applicationName) {
        if (url == null || !url.startsWith("jdbc:postgresql:")) {
            return url;
        }
        return url + (url.contains("?") ? "&" : "?") + "ApplicationName=" + applicationName;
    }

    private static CpuProbe treeOrNone(Long dbPid, ProcCpu proc, String url, int defaultPort, String what) {
        if (dbPid != null) {
            return CpuProbe.tree(proc, dbPid, "database process " + dbPid + " (--db-pid)");
        }
        OptionalInt port = localPort(url, defaultPort);
        if (port.isPresent() && proc.available()) {
            var pid = proc.listeningPid(port.getAsInt());
            if (pid.isPresent()) {
                return CpuProbe.tree(proc, pid.getAsLong(), what + " process " + pid.getAsLong() + " (listening on port "
                        + port.getAsInt() + "; the whole server, other clients' work included)");
            }
        }
        return CpuProbe.none("not measured (not found on this machine; pass --db-pid)");
    }

    /** The port of a JDBC URL's host when the host is this machine's loopback. */
    static OptionalInt localPort(String url, int defaultPort) {
        int start = url.indexOf("//");
        if (start < 0) {
            return OptionalInt.empty();
        }
        String rest = url.substring(start + 2);
        int end = rest.length();
        for (char stop : new char[] {'/', '?', ','}) {
            int at = rest.indexOf(stop);
            if (at >= 0) {
                end = Math.min(end, at);
            }
        }
        return RelayBench.localPort(rest.substring(0, end).contains(":") ? rest.substring(0, end)
                : rest.substring(0, end) + ":" + defaultPort);
    }

    private static final class None extends DatabaseGauges {
        None(CpuProbe cpu) {
            super(cpu);
        }

        @Override
        Reading read() {
            return Reading.NONE;
        }


        @Override
        String cleanupName() {
            return "-";
        }
    }

    private abstract static class OnConnection extends DatabaseGauges {
        final Connection connection;

        OnConnection(Connection connection, CpuProbe cpu) {
            super(cpu);
            this.connection = connection;
        }

        @Override
        public void close() {
            try {
                connection.close();
            } catch (SQLException e) {
                // the run is over
            }
        }
    }

    /** PostgreSQL: sizes and dead tuples; the CPU of the backends of the run's own connections. */
    private static final class Postgres extends OnConnection {
        private final String table;

        Postgres(Connection c, String table, String applicationName, Long dbPid, ProcCpu proc, String url) {
            super(c, dbPid != null ? CpuProbe.tree(proc, dbPid, "database process " + dbPid + " (--db-pid)")
                    : proc.available() && localPort(url, 5432).isPresent()
                    ? CpuProbe.processes(proc, () -> backends(c, applicationName),
                            "PostgreSQL backends of the run's writer and relay connections (application_name "
                                    + applicationName + "; autovacuum workers not included)")
                    : CpuProbe.none("not measured (PostgreSQL not on this machine; pass --db-pid)"));
            this.table = table;
        }

        private static Set<Long> backends(Connection connection, String applicationName) {
            Set<Long> pids = new HashSet<>();
            try (PreparedStatement s = connection.prepareStatement(
                    "SELECT pid FROM pg_stat_activity WHERE application_name = ?")) {
                s.setString(1, applicationName);
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        pids.add(r.getLong(1));
                    }
                }
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read pg_stat_activity: " + e.getMessage(), e);
            }
            return pids;
        }

        @Override
        Reading read() {
            try (PreparedStatement s = connection.prepareStatement("SELECT pg_table_size(c.oid), pg_indexes_size(c.oid),"
                    + " st.n_dead_tup, st.autovacuum_count FROM pg_class c JOIN pg_stat_user_tables st"
                    + " ON st.relid = c.oid WHERE c.relname = ? AND pg_table_is_visible(c.oid)")) {
                s.setString(1, table);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? new Reading(r.getLong(1), r.getLong(2), r.getLong(3), r.getLong(4), -1)
                            : Reading.NONE;
                }
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read the size of " + table + ": " + e.getMessage(), e);
            }
        }


        @Override
        String cleanupName() {
            return "dead tuples (autovacuums)";
        }
    }

    /** MariaDB: InnoDB's size estimates and history list length; the server's whole CPU. */
    private static final class MariaDb extends OnConnection {
        private final String table;

        MariaDb(Connection c, String table, Long dbPid, ProcCpu proc, String url) {
            super(c, treeOrNone(dbPid, proc, url, 3306, "mariadbd"));
            this.table = table;
        }

        @Override
        Reading read() {
            try {
                long data = -1;
                long index = -1;
                try (PreparedStatement s = connection.prepareStatement("SELECT data_length, index_length FROM"
                        + " information_schema.TABLES WHERE table_schema = DATABASE() AND table_name = ?")) {
                    s.setString(1, table);
                    try (ResultSet r = s.executeQuery()) {
                        if (r.next()) {
                            data = r.getLong(1);
                            index = r.getLong(2);
                        }
                    }
                }
                long history = -1;
                try (PreparedStatement s = connection.prepareStatement("SELECT count FROM information_schema.INNODB_METRICS"
                        + " WHERE name = 'trx_rseg_history_len'"); ResultSet r = s.executeQuery()) {
                    if (r.next()) {
                        history = r.getLong(1);
                    }
                }
                return new Reading(data, index, -1, -1, history);
            } catch (SQLException e) {
                throw new IllegalStateException("cannot read the size of " + table + ": " + e.getMessage(), e);
            }
        }


        @Override
        String cleanupName() {
            return "purge lag (history len)";
        }
    }

    /** H2 on a file or a server: the table's space in its store, estimated by H2. */
    private static final class H2 extends OnConnection {
        private final String table;

        H2(Connection c, String table, CpuProbe cpu) {
            super(c, cpu);
            this.table = table;
        }

        @Override
        Reading read() {
            try (PreparedStatement s = connection.prepareStatement("SELECT DISK_SPACE_USED(?)")) {
                s.setString(1, table);
                try (ResultSet r = s.executeQuery()) {
                    return r.next() ? new Reading(r.getLong(1), -1, -1, -1, -1) : Reading.NONE;
                }
            } catch (SQLException e) {
                return Reading.NONE;
            }
        }


        @Override
        String cleanupName() {
            return "-";
        }
    }
}
