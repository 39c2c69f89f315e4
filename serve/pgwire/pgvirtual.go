package pgwire

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/meterstore/meterstore/internal/sqltext"
)

// The virtual catalog: PostgreSQL's own answers to the catalog relations clients
// read on connect and to browse (JDBC's DatabaseMetaData, Grafana's query
// editor, BI tools), for the relations of the session's engine handle.
//
// DuckDB has pg_catalog and information_schema views, but they describe DuckDB:
// schema "main", DuckDB's type ids as atttypid (a TIMESTAMPTZ column is 32, a
// DECIMAL 21, which a PostgreSQL client reads as int2), DuckDB's type names as
// data_type ("DECIMAL(18,6)", which Grafana does not recognise as a number).
// A client that maps what it reads to PostgreSQL types gets wrong answers, not
// errors. So a statement reading one of the relations below gets it as a
// common table expression holding PostgreSQL's answer (translate in
// pgdialect.go substitutes the reference), and DuckDB runs the client's own
// joins, filters and ordering over it. The relations are in schema "public"
// (the engine's "main": translate maps one to the other), as tables, with oids
// from 16384; the catalog's own oids are PostgreSQL's.

// vcol is a column of a virtual relation: its name and DuckDB type.
type vcol struct{ name, typ string }

// vrelation is a virtual relation's columns and rows.
type vrelation struct {
	cols []vcol
	rows [][]any
}

func cols(spec string) []vcol {
	var out []vcol
	for _, c := range strings.Split(spec, ",") {
		name, typ, _ := strings.Cut(strings.TrimSpace(c), " ")
		out = append(out, vcol{name, typ})
	}
	return out
}

// sql renders the relation as a SELECT for a common table expression.
func (v vrelation) sql() string {
	var b strings.Builder
	b.WriteString("SELECT ")
	for i, c := range v.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		src := "NULL"
		if len(v.rows) > 0 {
			src = fmt.Sprintf("c%d", i+1)
		}
		fmt.Fprintf(&b, "CAST(%s AS %s) AS %s", src, c.typ, sqltext.Ident(c.name))
	}
	if len(v.rows) == 0 {
		b.WriteString(" WHERE false")
		return b.String()
	}
	b.WriteString(" FROM (VALUES ")
	for i, r := range v.rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, x := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(sqlLiteral(x))
		}
		b.WriteByte(')')
	}
	b.WriteString(") v(")
	for i := range v.cols {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "c%d", i+1)
	}
	b.WriteString(")")
	return b.String()
}

func sqlLiteral(x any) string {
	switch v := x.(type) {
	case nil:
		return "NULL"
	case string:
		return sqltext.String(v)
	case bool:
		return strconv.FormatBool(v)
	case []string:
		parts := make([]string, len(v))
		for i, s := range v {
			parts[i] = sqlLiteral(s)
		}
		return "[" + strings.Join(parts, ", ") + "]"
	}
	return fmt.Sprint(x)
}

// Well-known oids of PostgreSQL's catalog, as 'name'::regclass answers them.
const (
	oidPgCatalog          = 11
	oidPublic             = 2200
	oidInformationSchema  = 13000
	oidBootstrapSuperuser = 10
	oidFirstRole          = 16384 // the roles beside the session's own
	oidDefaultCollation   = 100
)

var catalogRelationOIDs = map[string]uint32{
	"pg_type": 1247, "pg_attribute": 1249, "pg_proc": 1255, "pg_class": 1259, "pg_database": 1262,
	"pg_attrdef": 2604, "pg_constraint": 2606, "pg_description": 2609, "pg_index": 2610, "pg_opclass": 2616,
	"pg_namespace": 2615, "pg_am": 2601, "pg_extension": 3079, "pg_sequence": 2224, "pg_collation": 3456,
}

// pgTypeInfo is a row of pg_type: the types results are served as, and the
// character types clients ask about by name.
type pgTypeInfo struct {
	oid       uint32
	name      string
	len       int
	byVal     bool
	category  string
	preferred bool
	proc      string // the I/O functions' stem: int4 → int4in, int4out, …; date_ → date_in, …
	align     string
	storage   string
	array     uint32
}

var pgTypes = []pgTypeInfo{
	{oidBool, "bool", 1, true, "B", true, "bool", "c", "p", 1000},
	{oidBytea, "bytea", -1, false, "U", false, "bytea", "i", "x", 1001},
	{18, "char", 1, true, "Z", false, "char", "c", "p", 1002},
	{19, "name", 64, false, "S", false, "name", "c", "p", 1003},
	{oidInt8, "int8", 8, true, "N", false, "int8", "d", "p", 1016},
	{oidInt2, "int2", 2, true, "N", false, "int2", "s", "p", 1005},
	{oidInt4, "int4", 4, true, "N", false, "int4", "i", "p", 1007},
	{oidText, "text", -1, false, "S", true, "text", "i", "x", 1009},
	{oidOID, "oid", 4, true, "N", true, "oid", "i", "p", 1028},
	{oidFloat4, "float4", 4, true, "N", false, "float4", "i", "p", 1021},
	{oidFloat8, "float8", 8, true, "N", true, "float8", "d", "p", 1022},
	{1042, "bpchar", -1, false, "S", false, "bpchar", "i", "x", 1014},
	{1043, "varchar", -1, false, "S", false, "varchar", "i", "x", 1015},
	{oidDate, "date", 4, true, "D", false, "date_", "i", "p", 1182},
	{oidTime, "time", 8, true, "D", false, "time_", "d", "p", 1183},
	{oidTimestamp, "timestamp", 8, true, "D", false, "timestamp_", "d", "p", 1115},
	{oidTimestamptz, "timestamptz", 8, true, "D", true, "timestamptz_", "d", "p", 1185},
	{oidInterval, "interval", 16, false, "T", true, "interval_", "d", "p", 1187},
	{oidNumeric, "numeric", -1, false, "N", false, "numeric_", "i", "m", 1231},
	{oidUUID, "uuid", 16, false, "U", false, "uuid_", "c", "p", 2951},
}

// typeOID resolves a type name as 'name'::regtype does, for the types of pg_type.
func typeOID(name string) (uint32, bool) {
	name = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(name)), "pg_catalog.")
	for _, t := range pgTypes {
		if t.name == name || formatType(t.oid, -1) == name {
			return t.oid, true
		}
	}
	o, ok := typeAliases[name]
	return o, ok
}

// typeAliases are the SQL names of pg_type's types that are not their typname.
var typeAliases = map[string]uint32{"boolean": oidBool, "int": oidInt4, "integer": oidInt4, "smallint": oidInt2,
	"bigint": oidInt8, "real": oidFloat4, "double precision": oidFloat8, "character varying": 1043, "character": 1042,
	"timestamp with time zone": oidTimestamptz, "timestamp without time zone": oidTimestamp, "decimal": oidNumeric}

// virtualRelation is the virtual relation name (a CTE name) for schema.name,
// or "" if the catalog does not virtualise it. pg_catalog's relations keep
// their names, so an unqualified reference (PostgreSQL always searches
// pg_catalog) and a column qualified by the relation's name still resolve.
func virtualRelation(schema, name string) string {
	switch schema {
	case "pg_catalog", "":
		if _, ok := virtualBuilders[name]; ok && strings.HasPrefix(name, "pg_") {
			return name
		}
	case "information_schema":
		if _, ok := virtualBuilders["information_schema_"+name]; ok {
			return "information_schema_" + name
		}
	}
	return ""
}

// vsession is what the virtual relations describe beyond the relations: who
// is connected to which database, with which settings.
type vsession struct {
	user, database string
	roles          []string // the configured users (none without authentication)
	params         map[string]string
	cursors        []vcursor
	activity       []vactivity
}

// vcursor is a row of pg_cursors.
type vcursor struct {
	name, statement string
	hold, binary    bool
	created         time.Time
}

// changing are the virtual relations whose rows change within a session:
// built for each statement, not once.
var changing = map[string]bool{"pg_cursors": true, "pg_stat_activity": true}

var virtualBuilders = map[string]func(c *pgCatalog, s vsession) vrelation{
	"pg_namespace": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols("oid INTEGER, nspname VARCHAR, nspowner INTEGER, nspacl VARCHAR[]"), [][]any{
			{oidPgCatalog, "pg_catalog", oidBootstrapSuperuser, nil},
			{oidPublic, "public", oidBootstrapSuperuser, nil},
			{oidInformationSchema, "information_schema", oidBootstrapSuperuser, nil},
		}}
	},
	"pg_class": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`oid INTEGER, relname VARCHAR, relnamespace INTEGER, reltype INTEGER, reloftype INTEGER,
			relowner INTEGER, relam INTEGER, relfilenode INTEGER, reltablespace INTEGER, relpages INTEGER, reltuples REAL,
			relallvisible INTEGER, reltoastrelid INTEGER, relhasindex BOOLEAN, relisshared BOOLEAN, relpersistence VARCHAR,
			relkind VARCHAR, relnatts SMALLINT, relchecks SMALLINT, relhasrules BOOLEAN, relhastriggers BOOLEAN,
			relhassubclass BOOLEAN, relrowsecurity BOOLEAN, relforcerowsecurity BOOLEAN, relispopulated BOOLEAN,
			relreplident VARCHAR, relispartition BOOLEAN, relrewrite INTEGER, relacl VARCHAR[], reloptions VARCHAR[],
			relpartbound VARCHAR`)}
		for _, r := range c.rels {
			v.rows = append(v.rows, []any{r.oid, r.name, oidPublic, 0, 0, oidBootstrapSuperuser, 0, 0, 0, 0, -1,
				0, 0, false, false, "p", "r", len(r.cols), 0, false, false, false, false, false, true, "n", false, 0, nil, nil, nil})
		}
		return v
	},
	"pg_attribute": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`attrelid INTEGER, attname VARCHAR, atttypid INTEGER, attstattarget INTEGER, attlen SMALLINT,
			attnum SMALLINT, attndims INTEGER, attcacheoff INTEGER, atttypmod INTEGER, attbyval BOOLEAN, attalign VARCHAR,
			attstorage VARCHAR, attcompression VARCHAR, attnotnull BOOLEAN, atthasdef BOOLEAN, atthasmissing BOOLEAN,
			attidentity VARCHAR, attgenerated VARCHAR, attisdropped BOOLEAN, attislocal BOOLEAN, attinhcount INTEGER,
			attcollation INTEGER, attacl VARCHAR[], attoptions VARCHAR[], attfdwoptions VARCHAR[]`)}
		for _, r := range c.rels {
			for i, col := range r.cols {
				t := typeInfo(col.oid)
				collation := 0
				if t.category == "S" {
					collation = oidDefaultCollation
				}
				v.rows = append(v.rows, []any{r.oid, col.name, col.oid, -1, t.len, i + 1, 0, -1, col.typmod, t.byVal, t.align,
					t.storage, "", r.notNull[i], false, false, "", "", false, true, 0, collation, nil, nil, nil})
			}
		}
		return v
	},
	"pg_type": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`oid INTEGER, typname VARCHAR, typnamespace INTEGER, typowner INTEGER, typlen SMALLINT,
			typbyval BOOLEAN, typtype VARCHAR, typcategory VARCHAR, typispreferred BOOLEAN, typisdefined BOOLEAN,
			typdelim VARCHAR, typrelid INTEGER, typsubscript VARCHAR, typelem INTEGER, typarray INTEGER, typinput VARCHAR,
			typoutput VARCHAR, typreceive VARCHAR, typsend VARCHAR, typmodin VARCHAR, typmodout VARCHAR, typanalyze VARCHAR,
			typalign VARCHAR, typstorage VARCHAR, typnotnull BOOLEAN, typbasetype INTEGER, typtypmod INTEGER,
			typndims INTEGER, typcollation INTEGER, typdefaultbin VARCHAR, typdefault VARCHAR, typacl VARCHAR[]`)}
		for _, t := range pgTypes {
			collation := 0
			if t.category == "S" {
				collation = oidDefaultCollation
			}
			p := t.proc
			v.rows = append(v.rows,
				[]any{t.oid, t.name, oidPgCatalog, oidBootstrapSuperuser, t.len, t.byVal, "b", t.category, t.preferred, true,
					",", 0, "-", 0, t.array, p + "in", p + "out", p + "recv", p + "send", "-", "-", "-",
					t.align, t.storage, false, 0, -1, 0, collation, nil, nil, nil},
				[]any{t.array, "_" + t.name, oidPgCatalog, oidBootstrapSuperuser, -1, false, "b", "A", false, true,
					",", 0, "array_subscript_handler", t.oid, 0, "array_in", "array_out", "array_recv", "array_send", "-", "-", "array_typanalyze",
					t.align, "x", false, 0, -1, 0, collation, nil, nil, nil})
		}
		return v
	},
	"pg_description": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols("objoid INTEGER, classoid INTEGER, objsubid INTEGER, description VARCHAR")}
		for _, r := range c.rels {
			v.rows = append(v.rows, []any{r.oid, catalogRelationOIDs["pg_class"], 0, r.comment})
		}
		return v
	},
	// No defaults, indexes, constraints, sequences or extensions: the
	// relations are computed.
	"pg_attrdef": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols("oid INTEGER, adrelid INTEGER, adnum SMALLINT, adbin VARCHAR")}
	},
	"pg_index": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols(`indexrelid INTEGER, indrelid INTEGER, indnatts SMALLINT, indnkeyatts SMALLINT,
			indisunique BOOLEAN, indnullsnotdistinct BOOLEAN, indisprimary BOOLEAN, indisexclusion BOOLEAN, indimmediate BOOLEAN, indisclustered BOOLEAN,
			indisvalid BOOLEAN, indcheckxmin BOOLEAN, indisready BOOLEAN, indislive BOOLEAN, indisreplident BOOLEAN,
			indkey SMALLINT[], indcollation INTEGER[], indclass INTEGER[], indoption SMALLINT[], indexprs VARCHAR, indpred VARCHAR`)}
	},
	// No index refers to an operator class.
	"pg_opclass": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols(`oid INTEGER, opcmethod INTEGER, opcname VARCHAR, opcnamespace INTEGER, opcowner INTEGER,
			opcfamily INTEGER, opcintype INTEGER, opcdefault BOOLEAN, opckeytype INTEGER`)}
	},
	"pg_constraint": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols(`oid INTEGER, conname VARCHAR, connamespace INTEGER, contype VARCHAR, condeferrable BOOLEAN,
			condeferred BOOLEAN, convalidated BOOLEAN, conrelid INTEGER, contypid INTEGER, conindid INTEGER, conparentid INTEGER,
			confrelid INTEGER, confupdtype VARCHAR, confdeltype VARCHAR, confmatchtype VARCHAR, conislocal BOOLEAN,
			coninhcount INTEGER, connoinherit BOOLEAN, conkey SMALLINT[], confkey SMALLINT[], conpfeqop INTEGER[],
			conppeqop INTEGER[], conffeqop INTEGER[], conexclop INTEGER[], conbin VARCHAR`)}
	},
	"pg_inherits": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols("inhrelid INTEGER, inhparent INTEGER, inhseqno INTEGER, inhdetachpending BOOLEAN")}
	},
	"pg_sequence": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols(`seqrelid INTEGER, seqtypid INTEGER, seqstart BIGINT, seqincrement BIGINT, seqmax BIGINT,
			seqmin BIGINT, seqcache BIGINT, seqcycle BOOLEAN`)}
	},
	"pg_collation": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols(`oid INTEGER, collname VARCHAR, collnamespace INTEGER, collowner INTEGER, collprovider VARCHAR,
			collisdeterministic BOOLEAN, collencoding INTEGER, collcollate VARCHAR, collctype VARCHAR, colliculocale VARCHAR,
			collversion VARCHAR`), [][]any{
			{oidDefaultCollation, "default", oidPgCatalog, oidBootstrapSuperuser, "d", true, -1, nil, nil, nil, nil},
			{950, "C", oidPgCatalog, oidBootstrapSuperuser, "c", true, -1, "C", "C", nil, nil},
			{951, "POSIX", oidPgCatalog, oidBootstrapSuperuser, "c", true, -1, "POSIX", "POSIX", nil, nil},
		}}
	},
	"pg_cursors": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`name VARCHAR, statement VARCHAR, is_holdable BOOLEAN, is_binary BOOLEAN,
			is_scrollable BOOLEAN, creation_time TIMESTAMPTZ`)}
		for _, cur := range s.cursors {
			v.rows = append(v.rows, []any{cur.name, cur.statement, cur.hold, cur.binary, false, cur.created.UTC().Format(time.RFC3339Nano)})
		}
		return v
	},
	"pg_extension": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols(`oid INTEGER, extname VARCHAR, extowner INTEGER, extnamespace INTEGER,
			extrelocatable BOOLEAN, extversion VARCHAR, extconfig INTEGER[], extcondition VARCHAR[]`)}
	},
	"pg_am": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols("oid INTEGER, amname VARCHAR, amhandler VARCHAR, amtype VARCHAR"), [][]any{
			{2, "heap", "heap_tableam_handler", "t"}, {403, "btree", "bthandler", "i"},
		}}
	},
	"pg_settings": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`name VARCHAR, setting VARCHAR, unit VARCHAR, category VARCHAR, short_desc VARCHAR,
			extra_desc VARCHAR, context VARCHAR, vartype VARCHAR, source VARCHAR, min_val VARCHAR, max_val VARCHAR,
			enumvals VARCHAR[], boot_val VARCHAR, reset_val VARCHAR, sourcefile VARCHAR, sourceline INTEGER,
			pending_restart BOOLEAN`)}
		names := make([]string, 0, len(s.params))
		for n := range s.params {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			v.rows = append(v.rows, []any{n, s.params[n], nil, "MeterStore", "", nil, "user", "string", "default",
				nil, nil, nil, s.params[n], s.params[n], nil, nil, false})
		}
		return v
	},
	"pg_database": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols(`oid INTEGER, datname VARCHAR, datdba INTEGER, encoding INTEGER, datlocprovider VARCHAR,
			datistemplate BOOLEAN, datallowconn BOOLEAN, datconnlimit INTEGER, dattablespace INTEGER, datcollate VARCHAR,
			datctype VARCHAR, daticulocale VARCHAR, datcollversion VARCHAR, datacl VARCHAR[]`), [][]any{
			{16383, s.database, oidBootstrapSuperuser, 6, "c", false, true, -1, 1663, "C", "C", nil, nil, nil},
		}}
	},
	// Every configured user is a role, as PostgreSQL shows every role to
	// every session; the session's own owns everything (oid 10), the others
	// follow in name order. Passwords show as PostgreSQL's mask.
	"pg_roles": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`rolname VARCHAR, rolsuper BOOLEAN, rolinherit BOOLEAN, rolcreaterole BOOLEAN,
			rolcreatedb BOOLEAN, rolcanlogin BOOLEAN, rolreplication BOOLEAN, rolconnlimit INTEGER, rolpassword VARCHAR,
			rolvaliduntil TIMESTAMPTZ, rolbypassrls BOOLEAN, rolconfig VARCHAR[], oid INTEGER`)}
		role := func(name string, oid int) {
			v.rows = append(v.rows, []any{name, false, true, false, false, true, false, -1, "********", nil, false, nil, oid})
		}
		role(s.user, oidBootstrapSuperuser)
		for i, name := range s.roles {
			if name != s.user {
				role(name, oidFirstRole+i)
			}
		}
		return v
	},
	"pg_stat_activity": func(c *pgCatalog, s vsession) vrelation { return statActivity(s) },
	// No role is a member of another.
	"pg_auth_members": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols("roleid INTEGER, member INTEGER, grantor INTEGER, admin_option BOOLEAN")}
	},
	"pg_views": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols("schemaname VARCHAR, viewname VARCHAR, viewowner VARCHAR, definition VARCHAR")}
	},
	"pg_tables": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`schemaname VARCHAR, tablename VARCHAR, tableowner VARCHAR, tablespace VARCHAR,
			hasindexes BOOLEAN, hasrules BOOLEAN, hastriggers BOOLEAN, rowsecurity BOOLEAN`)}
		for _, r := range c.rels {
			v.rows = append(v.rows, []any{"public", r.name, s.user, nil, false, false, false, false})
		}
		return v
	},
	"information_schema_schemata": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`catalog_name VARCHAR, schema_name VARCHAR, schema_owner VARCHAR,
			default_character_set_catalog VARCHAR, default_character_set_schema VARCHAR, default_character_set_name VARCHAR,
			sql_path VARCHAR`)}
		for _, n := range []string{"information_schema", "pg_catalog", "public"} {
			v.rows = append(v.rows, []any{s.database, n, s.user, nil, nil, nil, nil})
		}
		return v
	},
	"information_schema_tables": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, table_type VARCHAR,
			self_referencing_column_name VARCHAR, reference_generation VARCHAR, user_defined_type_catalog VARCHAR,
			user_defined_type_schema VARCHAR, user_defined_type_name VARCHAR, is_insertable_into VARCHAR,
			is_typed VARCHAR, commit_action VARCHAR`)}
		for _, r := range c.rels {
			v.rows = append(v.rows, []any{s.database, "public", r.name, "BASE TABLE", nil, nil, nil, nil, nil, "NO", "NO", nil})
		}
		return v
	},
	"information_schema_views": func(c *pgCatalog, s vsession) vrelation {
		return vrelation{cols: cols(`table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, view_definition VARCHAR,
			check_option VARCHAR, is_updatable VARCHAR, is_insertable_into VARCHAR, is_trigger_updatable VARCHAR,
			is_trigger_deletable VARCHAR, is_trigger_insertable_into VARCHAR`)}
	},
	"information_schema_columns": func(c *pgCatalog, s vsession) vrelation {
		v := vrelation{cols: cols(`table_catalog VARCHAR, table_schema VARCHAR, table_name VARCHAR, column_name VARCHAR,
			ordinal_position INTEGER, column_default VARCHAR, is_nullable VARCHAR, data_type VARCHAR,
			character_maximum_length INTEGER, character_octet_length INTEGER, numeric_precision INTEGER,
			numeric_precision_radix INTEGER, numeric_scale INTEGER, datetime_precision INTEGER, interval_type VARCHAR,
			interval_precision INTEGER, character_set_catalog VARCHAR, character_set_schema VARCHAR,
			character_set_name VARCHAR, collation_catalog VARCHAR, collation_schema VARCHAR, collation_name VARCHAR,
			domain_catalog VARCHAR, domain_schema VARCHAR, domain_name VARCHAR, udt_catalog VARCHAR, udt_schema VARCHAR,
			udt_name VARCHAR, scope_catalog VARCHAR, scope_schema VARCHAR, scope_name VARCHAR,
			maximum_cardinality INTEGER, dtd_identifier VARCHAR, is_self_referencing VARCHAR, is_identity VARCHAR,
			identity_generation VARCHAR, identity_start VARCHAR, identity_increment VARCHAR, identity_maximum VARCHAR,
			identity_minimum VARCHAR, identity_cycle VARCHAR, is_generated VARCHAR, generation_expression VARCHAR,
			is_updatable VARCHAR`)}
		for _, r := range c.rels {
			for i, col := range r.cols {
				nullable := "YES"
				if r.notNull[i] {
					nullable = "NO"
				}
				var octets, precision, radix, scale, dtPrecision any
				switch col.oid {
				case oidText:
					octets = 1073741824
				case oidNumeric:
					radix = 10
					if col.typmod >= 4 {
						precision, scale = (col.typmod-4)>>16, (col.typmod-4)&0xffff
					}
				case oidInt2, oidInt4, oidInt8, oidFloat4, oidFloat8:
					radix = 2
					precision = map[uint32]int{oidInt2: 16, oidInt4: 32, oidInt8: 64, oidFloat4: 24, oidFloat8: 53}[col.oid]
					if col.oid == oidInt2 || col.oid == oidInt4 || col.oid == oidInt8 {
						scale = 0
					}
				case oidDate:
					dtPrecision = 0
				case oidTime, oidTimestamp, oidTimestamptz, oidInterval:
					dtPrecision = 6
				}
				v.rows = append(v.rows, []any{s.database, "public", r.name, col.name, i + 1, nil, nullable,
					formatType(col.oid, -1), nil, octets, precision, radix, scale, dtPrecision, nil, nil, nil, nil, nil,
					nil, nil, nil, nil, nil, nil, s.database, "pg_catalog", typeInfo(col.oid).name, nil, nil, nil, nil,
					strconv.Itoa(i + 1), "NO", "NO", nil, nil, nil, nil, nil, "NO", "NEVER", nil, "NO"})
			}
		}
		return v
	},
}

func typeInfo(oid uint32) pgTypeInfo {
	for _, t := range pgTypes {
		if t.oid == oid {
			return t
		}
	}
	return typeInfo(oidText) // what an unmapped DuckDB type is served as
}

// virtualSQL is the SQL of a virtual relation (built once per session).
func (c *pgCatalog) virtualSQL(name string, s vsession) string {
	if c.virtual == nil {
		c.virtual = map[string]string{}
	}
	if q, ok := c.virtual[name]; ok {
		return q
	}
	q := virtualBuilders[name](c, s).sql()
	if !changing[name] {
		c.virtual[name] = q
	}
	return q
}

// regclass answers 'name'::regclass: a relation of the session or of the
// catalog, optionally schema-qualified.
func (c *pgCatalog) regclass(name string) (uint32, bool) {
	name = strings.Trim(name, `"`)
	if s, n, ok := strings.Cut(name, "."); ok {
		s = strings.Trim(s, `"`)
		n = strings.Trim(n, `"`)
		if s == "pg_catalog" {
			o, ok := catalogRelationOIDs[n]
			return o, ok
		}
		if s != "public" {
			return 0, false
		}
		name = n
	}
	for _, r := range c.rels {
		if r.name == name {
			return r.oid, true
		}
	}
	o, ok := catalogRelationOIDs[name]
	return o, ok
}
