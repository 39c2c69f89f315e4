package meterstore.interop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The Arrow Flight SQL JDBC driver against msql serve --flight. */
class FlightSqlJdbcTest {
  static Deployment d;

  @BeforeAll
  static void setUp() throws Exception {
    d = new Deployment();
  }

  Connection connect(String user, String password) throws SQLException {
    Properties p = new Properties();
    p.setProperty("user", user);
    p.setProperty("password", password);
    return DriverManager.getConnection(d.flightUrl(), p);
  }

  @Test
  void totalsEqualMsql() throws Exception {
    try (Connection c = connect(d.user, d.password);
        ResultSet rs = c.createStatement().executeQuery(
            "SELECT tenant, strftime(balancing_day, '%Y-%m') AS month, sum(value) AS s, count(*) AS n FROM readings GROUP BY ALL")) {
      assertEquals(d.totals("all_resolved"), Deployment.totalsOf(rs));
    }
  }

  @Test
  void preparedStatementWithParameters() throws Exception {
    try (Connection c = connect(d.user, d.password);
        PreparedStatement ps = c.prepareStatement(
            "SELECT value FROM readings WHERE malo_id = ? AND obis_code = ? AND tenant = ? AND \"from\" = CAST(? AS TIMESTAMPTZ)")) {
      var p = d.bindPreciseKey(ps);
      ps.setString(4, p.get("from").asText());
      try (ResultSet rs = ps.executeQuery()) {
        assertTrue(rs.next());
        assertEquals(p.get("value").asText(), rs.getBigDecimal(1).toPlainString());
      }
    }
  }

  @Test
  void catalogListsTheRelations() throws Exception {
    try (Connection c = connect(d.user, d.password); ResultSet rs = c.getMetaData().getTables(null, null, "%", null)) {
      List<String> names = new ArrayList<>();
      while (rs.next()) {
        names.add(rs.getString("TABLE_NAME"));
      }
      assertTrue(names.containsAll(List.of("readings", "readings_versions")), names.toString());
    }
  }

  @Test
  void writesAreRefused() throws Exception {
    try (Connection c = connect(d.user, d.password)) {
      assertThrows(SQLException.class, () -> c.createStatement().execute("DELETE FROM readings"));
    }
  }

  @Test
  void scopedUserSeesOnlyItsTenant() throws Exception {
    try (Connection c = connect(d.scopedUser, d.scopedPassword);
        ResultSet rs = c.createStatement().executeQuery("SELECT DISTINCT tenant FROM readings_versions")) {
      List<String> tenants = new ArrayList<>();
      while (rs.next()) {
        tenants.add(rs.getString(1));
      }
      assertEquals(List.of(d.scopedTenant), tenants);
    }
  }
}
