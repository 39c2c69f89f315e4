import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.OffsetDateTime;
import java.util.Properties;

/**
 * JdbcProbe does what a JDBC client or BI tool does against MeterStore's pgwire
 * server and fails (exit 1) on the first step that errors or answers
 * implausibly. CI has no Java; the statements the driver sent are replayed by
 * TestPGWireClientStatements from ../jdbc_statements.sql.
 *
 * Usage: java -cp /usr/share/java/postgresql.jar JdbcProbe.java HOST:PORT [prepareThreshold]
 */
public class JdbcProbe {
    static int failures = 0;

    public static void main(String[] args) throws Exception {
        String addr = args.length > 0 ? args[0] : "127.0.0.1:5433";
        String url = "jdbc:postgresql://" + addr + "/meterstore";
        Properties p = new Properties();
        p.setProperty("user", "admin");
        p.setProperty("password", "s3cret");
        p.setProperty("sslmode", "disable");
        if (args.length > 1) {
            p.setProperty("prepareThreshold", args[1]);
        }
        try (Connection c = DriverManager.getConnection(url, p)) {
            DatabaseMetaData md = c.getMetaData();
            System.out.printf("connected: %s %s, driver %s %s, prepareThreshold %s%n",
                    md.getDatabaseProductName(), md.getDatabaseProductVersion(),
                    md.getDriverName(), md.getDriverVersion(), p.getProperty("prepareThreshold", "default (5)"));

            step("getSchemas", () -> {
                try (ResultSet rs = md.getSchemas()) {
                    boolean publicSeen = false;
                    while (rs.next()) {
                        System.out.printf("  schema %s%n", rs.getString("TABLE_SCHEM"));
                        publicSeen |= "public".equals(rs.getString("TABLE_SCHEM"));
                    }
                    check(publicSeen, "schema public listed");
                }
            });
            step("getCatalogs", () -> dump(md.getCatalogs(), 5));
            step("getTableTypes", () -> dump(md.getTableTypes(), 20));
            step("getTables(all)", () -> {
                try (ResultSet rs = md.getTables(null, null, "%", new String[] {"TABLE", "VIEW"})) {
                    boolean readings = false;
                    while (rs.next()) {
                        System.out.printf("  %s.%s %s%n", rs.getString("TABLE_SCHEM"), rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
                        readings |= "readings".equals(rs.getString("TABLE_NAME")) && "public".equals(rs.getString("TABLE_SCHEM"));
                    }
                    check(readings, "public.readings listed");
                }
            });
            step("getTables(public, readings, null types)", () -> {
                try (ResultSet rs = md.getTables(null, "public", "readings", null)) {
                    check(rs.next(), "readings found");
                    System.out.printf("  %s.%s %s%n", rs.getString("TABLE_SCHEM"), rs.getString("TABLE_NAME"), rs.getString("TABLE_TYPE"));
                }
            });
            step("getColumns(readings)", () -> {
                try (ResultSet rs = md.getColumns(null, "public", "readings", "%")) {
                    int n = 0;
                    boolean from = false, value = false;
                    while (rs.next()) {
                        n++;
                        String name = rs.getString("COLUMN_NAME");
                        String type = rs.getString("TYPE_NAME");
                        System.out.printf("  %d %s %s (java.sql.Types %d) size %d digits %d nullable %d%n",
                                rs.getInt("ORDINAL_POSITION"), name, type, rs.getInt("DATA_TYPE"),
                                rs.getInt("COLUMN_SIZE"), rs.getInt("DECIMAL_DIGITS"), rs.getInt("NULLABLE"));
                        from |= "from".equals(name) && "timestamptz".equals(type) && rs.getInt("DATA_TYPE") == java.sql.Types.TIMESTAMP;
                        value |= "value".equals(name) && "numeric".equals(type) && rs.getInt("DATA_TYPE") == java.sql.Types.NUMERIC;
                    }
                    check(n > 5, "readings has columns");
                    check(from, "from is timestamptz");
                    check(value, "value is numeric");
                }
            });
            step("getColumns(readings\\_versions) with the escape BI tools add", () -> {
                try (ResultSet rs = md.getColumns(null, "public", "readings" + md.getSearchStringEscape() + "_versions", "%")) {
                    int n = 0;
                    while (rs.next()) {
                        n++;
                        check("readings_versions".equals(rs.getString("TABLE_NAME")), "only readings_versions");
                    }
                    System.out.printf("  %d columns%n", n);
                    check(n > 5, "readings_versions has columns");
                }
            });
            step("getPrimaryKeys(readings)", () -> dump(md.getPrimaryKeys(null, "public", "readings"), 20));
            step("getImportedKeys(readings)", () -> dump(md.getImportedKeys(null, "public", "readings"), 20));
            step("getIndexInfo(readings)", () -> dump(md.getIndexInfo(null, "public", "readings", false, true), 20));
            step("getTypeInfo", () -> {
                try (ResultSet rs = md.getTypeInfo()) {
                    int n = 0;
                    boolean numeric = false, tstz = false;
                    while (rs.next()) {
                        n++;
                        numeric |= "numeric".equals(rs.getString("TYPE_NAME"));
                        tstz |= "timestamptz".equals(rs.getString("TYPE_NAME"));
                    }
                    System.out.printf("  %d types%n", n);
                    check(numeric && tstz, "numeric and timestamptz listed");
                }
            });
            step("getSchema/getCatalog", () -> System.out.printf("  schema %s catalog %s%n", c.getSchema(), c.getCatalog()));

            String q = "SELECT malo_id, \"from\", balancing_day, value, version FROM readings WHERE malo_id = ? AND \"from\" >= ? ORDER BY \"from\" LIMIT 3";
            String malo;
            try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT min(malo_id) FROM readings")) {
                rs.next();
                malo = rs.getString(1);
            }
            for (int i = 1; i <= 7; i++) {
                final int run = i;
                step("prepared statement run " + i, () -> {
                    try (PreparedStatement ps = c.prepareStatement(q)) {
                        ps.setString(1, malo);
                        ps.setObject(2, OffsetDateTime.parse("2000-01-01T00:00:00Z"));
                        try (ResultSet rs = ps.executeQuery()) {
                            ResultSetMetaData m = rs.getMetaData();
                            if (run == 1) {
                                for (int k = 1; k <= m.getColumnCount(); k++) {
                                    System.out.printf("  column %s: %s (java.sql.Types %d, %s) precision %d scale %d%n",
                                            m.getColumnName(k), m.getColumnTypeName(k), m.getColumnType(k),
                                            m.getColumnClassName(k), m.getPrecision(k), m.getScale(k));
                                }
                                check("timestamptz".equals(m.getColumnTypeName(2)), "from is timestamptz");
                                check("date".equals(m.getColumnTypeName(3)), "balancing_day is date");
                                check("numeric".equals(m.getColumnTypeName(4)), "value is numeric");
                                check("text".equals(m.getColumnTypeName(1)), "malo_id is text");
                            }
                            int n = 0;
                            while (rs.next()) {
                                n++;
                                check(malo.equals(rs.getString(1)), "the parameter filtered");
                                OffsetDateTime t = rs.getObject(2, OffsetDateTime.class);
                                BigDecimal v = rs.getBigDecimal(4);
                                java.sql.Date d = rs.getDate(3);
                                if (run == 1) {
                                    System.out.printf("  row %s %s %s %s%n", rs.getString(1), t, d, v);
                                }
                            }
                            check(n == 3, "three rows");
                        }
                    }
                });
            }
            step("fetch size (portal row limit)", () -> {
                c.setAutoCommit(false);
                try (Statement st = c.createStatement()) {
                    st.setFetchSize(100);
                    try (ResultSet rs = st.executeQuery("SELECT malo_id, \"from\", value FROM readings ORDER BY malo_id, \"from\"")) {
                        long n = 0;
                        while (rs.next()) {
                            n++;
                        }
                        System.out.printf("  %d rows in batches of 100%n", n);
                        check(n > 100, "more rows than one batch");
                    }
                }
                try (Statement st = c.createStatement(); ResultSet rs = st.executeQuery("SELECT count(*) FROM readings")) {
                    rs.next();
                    System.out.printf("  count(*) %d%n", rs.getLong(1));
                }
                c.commit();
                c.setAutoCommit(true);
            });
            step("a write is refused", () -> {
                try (Statement st = c.createStatement()) {
                    st.executeUpdate("DELETE FROM readings_versions");
                    check(false, "DELETE refused");
                } catch (SQLException e) {
                    System.out.printf("  refused: %s %s%n", e.getSQLState(), e.getMessage().split("\n")[0]);
                    check("42501".equals(e.getSQLState()), "SQLSTATE 42501");
                }
            });
        }
        System.out.println(failures == 0 ? "OK" : failures + " FAILED");
        System.exit(failures == 0 ? 0 : 1);
    }

    interface Step {
        void run() throws SQLException;
    }

    static void step(String name, Step s) {
        System.out.println("== " + name);
        try {
            s.run();
        } catch (SQLException e) {
            failures++;
            System.out.printf("  FAILED: %s %s%n", e.getSQLState(), e.getMessage());
        }
    }

    static void check(boolean ok, String what) {
        if (!ok) {
            failures++;
            System.out.println("  CHECK FAILED: " + what);
        }
    }

    static void dump(ResultSet rs, int max) throws SQLException {
        try (rs) {
            ResultSetMetaData m = rs.getMetaData();
            int n = 0;
            while (rs.next()) {
                if (n++ >= max) {
                    continue;
                }
                StringBuilder b = new StringBuilder(" ");
                for (int k = 1; k <= m.getColumnCount(); k++) {
                    b.append(' ').append(m.getColumnName(k)).append('=').append(rs.getString(k));
                }
                System.out.println(b);
            }
            System.out.printf("  %d rows%n", n);
        }
    }
}
