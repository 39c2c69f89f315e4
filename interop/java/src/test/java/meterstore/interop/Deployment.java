package meterstore.interop;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.File;
import java.io.IOException;
import java.math.BigDecimal;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.TreeMap;

/** The deployment the harness stood up (INTEROP_* variables) and what msql found on it. */
final class Deployment {
  final JsonNode expected;
  final String pgHost = env("INTEROP_PG_HOST");
  final int pgPort = Integer.parseInt(env("INTEROP_PG_PORT"));
  final int flightPort = Integer.parseInt(env("INTEROP_FLIGHT_PORT"));
  final String user = env("INTEROP_USER");
  final String password = env("INTEROP_PASSWORD");
  final String scopedUser = env("INTEROP_SCOPED_USER");
  final String scopedPassword = env("INTEROP_SCOPED_PASSWORD");
  final String scopedTenant = env("INTEROP_SCOPED_TENANT");

  Deployment() throws IOException {
    expected = new ObjectMapper().readTree(new File(env("INTEROP_EXPECTED")));
  }

  static String env(String name) {
    String v = System.getenv(name);
    if (v == null) {
      throw new IllegalStateException(name + " not set: run through `go tool task interop`");
    }
    return v;
  }

  /** Expected totals: "tenant|month" → "sum|rows", the sum as an exact decimal. */
  Map<String, String> totals(String key) {
    Map<String, String> out = new TreeMap<>();
    for (JsonNode t : expected.get(key)) {
      out.put(t.get("tenant").asText() + "|" + t.get("month").asText(),
          new BigDecimal(t.get("sum").asText()).toPlainString() + "|" + t.get("rows").asLong());
    }
    return out;
  }

  /** Totals as {@link #totals} keys them, from rows of (tenant, month, sum, count). */
  static Map<String, String> totalsOf(ResultSet rs) throws SQLException {
    Map<String, String> out = new TreeMap<>();
    while (rs.next()) {
      out.put(rs.getString(1) + "|" + rs.getString(2), rs.getBigDecimal(3).toPlainString() + "|" + rs.getLong(4));
    }
    return out;
  }

  /** The first of the "precise" readings, its key (malo_id, obis_code, tenant) bound to parameters 1–3. */
  JsonNode bindPreciseKey(PreparedStatement ps) throws SQLException {
    JsonNode p = expected.get("precise").get(0);
    ps.setString(1, p.get("malo_id").asText());
    ps.setString(2, p.get("obis_code").asText());
    ps.setString(3, p.get("tenant").asText());
    return p;
  }

  /**
   * The real PostgreSQL the deployment's hot tier runs on, as a JDBC URL (from its postgres://user@host:port/db DSN):
   * the reference msql serve's wire is compared with.
   */
  String referenceUrl() {
    java.net.URI u = java.net.URI.create(env("INTEROP_CATALOG_DSN"));
    return "jdbc:postgresql://" + u.getHost() + ":" + u.getPort() + u.getPath() + "?sslmode=disable&user=" + u.getUserInfo();
  }

  String pgUrl() {
    return "jdbc:postgresql://" + pgHost + ":" + pgPort + "/meterstore?sslmode=disable";
  }

  String flightUrl() {
    return "jdbc:arrow-flight-sql://127.0.0.1:" + flightPort + "/?useEncryption=false";
  }
}
