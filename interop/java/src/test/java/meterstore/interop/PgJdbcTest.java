package meterstore.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.LocalDateTime;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** pgjdbc over pgwire: the DatabaseMetaData calls DBeaver and Metabase make, and queries. */
class PgJdbcTest {
  static Deployment d;

  @BeforeAll
  static void setUp() throws Exception {
    d = new Deployment();
  }

  Connection connect(String user, String password) throws SQLException {
    return DriverManager.getConnection(d.pgUrl(), user, password);
  }

  @Test
  void getTablesListsTheRelations() throws Exception {
    try (Connection c = connect(d.user, d.password)) {
      DatabaseMetaData md = c.getMetaData();
      List<String> names = new ArrayList<>();
      try (ResultSet rs = md.getTables(null, "public", "%", null)) {
        while (rs.next()) {
          names.add(rs.getString("TABLE_NAME"));
          assertEquals("public", rs.getString("TABLE_SCHEM"));
        }
      }
      assertEquals(List.of("readings", "readings_versions"), names);
      try (ResultSet rs = md.getSchemas()) {
        List<String> schemas = new ArrayList<>();
        while (rs.next()) {
          schemas.add(rs.getString("TABLE_SCHEM"));
        }
        assertTrue(schemas.contains("public"), schemas.toString());
      }
    }
  }

  @Test
  void getColumnsMapsTheTypes() throws Exception {
    try (Connection c = connect(d.user, d.password)) {
      Map<String, Integer> types = new HashMap<>();
      Map<String, String> typeNames = new HashMap<>();
      Map<String, Integer> nullable = new HashMap<>();
      List<String> order = new ArrayList<>();
      try (ResultSet rs = c.getMetaData().getColumns(null, "public", "readings", "%")) {
        while (rs.next()) {
          String col = rs.getString("COLUMN_NAME");
          order.add(col);
          types.put(col, rs.getInt("DATA_TYPE"));
          typeNames.put(col, rs.getString("TYPE_NAME"));
          nullable.put(col, rs.getInt("NULLABLE"));
          if (col.equals("value")) {
            assertEquals(18, rs.getInt("COLUMN_SIZE"));
            assertEquals(6, rs.getInt("DECIMAL_DIGITS"));
          }
        }
      }
      List<String> want = new ArrayList<>();
      d.expected.get("fields").forEach(f -> want.add(f.get("name").asText()));
      assertEquals(want, order);
      assertEquals(Types.NUMERIC, types.get("value"));
      assertEquals("numeric", typeNames.get("value"));
      assertEquals(Types.TIMESTAMP_WITH_TIMEZONE == types.get("from") ? Types.TIMESTAMP_WITH_TIMEZONE : Types.TIMESTAMP,
          types.get("from"));
      assertEquals("timestamptz", typeNames.get("from"));
      assertEquals(Types.DATE, types.get("balancing_day"));
      assertEquals(Types.VARCHAR, types.get("malo_id"));
      assertEquals(DatabaseMetaData.columnNoNulls, nullable.get("malo_id"));
      assertEquals(DatabaseMetaData.columnNullable, nullable.get("melo_id"));
    }
  }

  @Test
  void getTypeInfoKnowsTheTypesServed() throws Exception {
    try (Connection c = connect(d.user, d.password); ResultSet rs = c.getMetaData().getTypeInfo()) {
      Map<String, Integer> types = new HashMap<>();
      while (rs.next()) {
        types.put(rs.getString("TYPE_NAME"), rs.getInt("DATA_TYPE"));
      }
      assertEquals(Types.NUMERIC, types.get("numeric"));
      assertEquals(Types.DATE, types.get("date"));
      assertEquals(Types.VARCHAR, types.get("text"));
      assertEquals(Types.BIGINT, types.get("int8"));
      assertTrue(types.containsKey("timestamptz"), types.toString());
    }
  }

  @Test
  void totalsEqualMsql() throws Exception {
    try (Connection c = connect(d.user, d.password);
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT tenant, strftime(balancing_day, '%Y-%m') AS month, sum(value), count(*) FROM readings GROUP BY 1, 2")) {
      assertEquals("sum", rs.getMetaData().getColumnName(3));
      assertEquals("count", rs.getMetaData().getColumnName(4));
      assertEquals(d.totals("all_resolved"), Deployment.totalsOf(rs));
    }
  }

  @Test
  void preparedStatementWithParameters() throws Exception {
    try (Connection c = connect(d.user, d.password);
        PreparedStatement ps = c.prepareStatement(
            "SELECT value, \"from\" FROM readings WHERE malo_id = ? AND obis_code = ? AND tenant = ? AND \"from\" = ?")) {
      var p = d.bindPreciseKey(ps);
      ps.setObject(4, OffsetDateTime.parse(p.get("from").asText()));
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(p.get("value").asText(), rs.getBigDecimal(1).toPlainString());
        assertEquals(OffsetDateTime.parse(p.get("from").asText()).toInstant(),
            rs.getObject(2, OffsetDateTime.class).toInstant());
      }
    }
  }

  @Test
  void divisionByZeroIsAnError() throws Exception {
    try (Connection c = connect(d.user, d.password)) {
      SQLException e = assertThrows(SQLException.class, () -> c.createStatement().executeQuery("SELECT 1/0").next());
      assertEquals("22012", e.getSQLState(), e.getMessage());
    }
  }

  @Test
  void writesAreRefused() throws Exception {
    try (Connection c = connect(d.user, d.password)) {
      SQLException e = assertThrows(SQLException.class, () -> c.createStatement().execute("DELETE FROM readings"));
      assertEquals("42501", e.getSQLState(), e.getMessage());
    }
  }

  @Test
  void scopedUserSeesOnlyItsTenant() throws Exception {
    try (Connection c = connect(d.scopedUser, d.scopedPassword)) {
      for (String q : List.of("SELECT DISTINCT tenant FROM readings", "SELECT DISTINCT tenant FROM readings_versions",
          "SELECT DISTINCT tenant FROM readings WHERE tenant <> 'x' OR true")) {
        List<String> tenants = new ArrayList<>();
        try (ResultSet rs = c.createStatement().executeQuery(q)) {
          while (rs.next()) {
            tenants.add(rs.getString(1));
          }
        }
        assertEquals(List.of(d.scopedTenant), tenants, q);
      }
      try (ResultSet rs = c.getMetaData().getTables(null, "public", "%", null)) {
        while (rs.next()) {
          assertTrue(rs.getString("TABLE_NAME").startsWith("readings"));
        }
      }
    }
  }

  /**
   * A LocalDateTime parameter (sent as {@code timestamp}, OID 1114) means the session's zone, and ±infinity arrives as
   * PostgreSQL sends it — in text and in binary (prepareThreshold=-1 makes pgjdbc prepare at once and read binary).
   */
  @Test
  void timeValuesAsPostgreSQLSendsThem() throws Exception {
    String q = "SELECT ?::timestamptz, ?::timestamp, TIMESTAMPTZ 'infinity', TIMESTAMPTZ '-infinity', DATE 'infinity'";
    LocalDateTime midnight = LocalDateTime.of(2025, 10, 24, 0, 0);
    for (String threshold : List.of("0", "-1")) {
      Map<String, List<String>> got = new HashMap<>();
      Map<String, Connection> servers = Map.of(
          "msql serve", DriverManager.getConnection(d.pgUrl() + "&prepareThreshold=" + threshold, d.user, d.password),
          "PostgreSQL", DriverManager.getConnection(d.referenceUrl() + "&prepareThreshold=" + threshold));
      for (Map.Entry<String, Connection> s : servers.entrySet()) {
        try (Connection c = s.getValue()) {
          c.createStatement().execute("SET TimeZone = 'Europe/Berlin'");
          try (PreparedStatement ps = c.prepareStatement(q)) {
            ps.setObject(1, midnight);
            ps.setObject(2, midnight);
            List<String> row = new ArrayList<>();
            try (ResultSet rs = ps.executeQuery()) {
              assertTrue(rs.next());
              for (int i = 1; i <= 5; i++) {
                row.add(rs.getString(i));
              }
              row.add(String.valueOf(rs.getObject(1, OffsetDateTime.class)));
              row.add(String.valueOf(rs.getObject(3, OffsetDateTime.class)));
              row.add(String.valueOf(rs.getObject(4, OffsetDateTime.class)));
            }
            got.put(s.getKey(), row);
          }
        }
      }
      assertEquals(got.get("PostgreSQL"), got.get("msql serve"), "prepareThreshold=" + threshold);
      // pgjdbc hands an OffsetDateTime in UTC: Berlin's midnight, not UTC's.
      assertEquals("2025-10-23T22:00Z", got.get("msql serve").get(5));
    }
  }
}
