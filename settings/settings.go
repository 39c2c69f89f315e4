package settings

import (
	"fmt"
	"log/slog"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"

	"github.com/meterstore/meterstore"
)

// Settings is the TOML front end over the same validated types a program builds
// by hand: a file and a hand-built configuration pass through identical checks.
// Unknown keys and missing ${VAR}s are errors, never silently ignored.
//
//	[hot]
//	url = "${DATABASE_URL}"
//	[cold]
//	catalog = "sql"                  # or "rest"
//	warehouse = "file:///var/lib/meterstore/warehouse"   # or "s3://bucket/warehouse"
//	namespace = "metering"
//	[cold.s3]                        # only for an s3:// warehouse; all optional
//	endpoint = "http://127.0.0.1:8333"  # an S3-compatible store (MinIO, Ceph, SeaweedFS); "" = AWS
//	region = "eu-central-1"
//	path_style = true                # bucket in the path, as S3-compatible stores expect
//	access_key_id = "${S3_ACCESS_KEY_ID}"          # without a key: the AWS credential chain
//	secret_access_key = "${S3_SECRET_ACCESS_KEY}"
//	[engine]
//	time_zone = "UTC"                # what a timestamp without an offset means
//	extension_directory = "/opt/meterstore/duckdb-extensions"  # DuckDB's postgres and iceberg extensions
//	hot_path = "default"             # or "go", "extension"; cold_path likewise
//	[serve]                          # msql serve's limits (ServeSettings, docs/runbook.md); its flags override them
//	statement_timeout = "5m"
//	max_result_rows = 1000000
//	confined_databases = 4           # scoped users' DuckDB databases open at once
//	[[tables]]
//	name = "readings_versions"
//	extra_columns = [{ name = "tenant", identity = true }, { name = "bilanzkreis", check = "EIC:X" }]
//	[tables.hot]
//	partition_step = "1d"
type Settings struct {
	Hot    HotSettings              `toml:"hot"`
	Cold   ColdSettings             `toml:"cold"`
	Engine EngineSettings           `toml:"engine"`
	Serve  ServeSettings            `toml:"serve"`
	Tables []meterstore.TableConfig `toml:"-"`
	Users  []UserSettings           `toml:"users"`
}

// HotSettings locate the PostgreSQL that holds the hot tier.
type HotSettings struct {
	URL            string `toml:"url"`
	MaxConnections int    `toml:"max_connections"` // 0 = pgx's default
}

// ColdSettings locate the Iceberg catalog and warehouse.
type ColdSettings struct {
	Catalog   string     `toml:"catalog"`   // "sql" (default: the catalog lives in the hot PostgreSQL) or "rest"
	URI       string     `toml:"uri"`       // REST catalog URI, or a PostgreSQL DSN for a separate SQL catalog
	Warehouse string     `toml:"warehouse"` // file:///… (also s3://… where iceberg-go supports it)
	Namespace string     `toml:"namespace"` // default "meterstore"
	S3        S3Settings `toml:"s3"`        // object-store access for an s3:// warehouse
}

// S3Settings reach an s3:// warehouse: AWS S3 or an S3-compatible store. The
// same settings serve the writers (iceberg-go's object-store IO) and the
// engine's reads (DuckDB's httpfs secret, or the Go reader); with no access key
// both take the standard AWS credential chain (environment, shared files,
// instance role).
type S3Settings struct {
	Endpoint        string `toml:"endpoint"`   // http(s)://host:port of an S3-compatible store; "" = AWS
	Region          string `toml:"region"`     // "" = the credential chain's region, else us-east-1
	PathStyle       *bool  `toml:"path_style"` // nil = path style exactly when an endpoint is set
	AccessKeyID     string `toml:"access_key_id"`
	SecretAccessKey Secret `toml:"secret_access_key"`
	SessionToken    Secret `toml:"session_token"`
	// RequestTimeout bounds one request to the store ("30s"); 0 = one minute.
	RequestTimeout time.Duration `toml:"request_timeout"`
}

// UsesPathStyle is whether requests name the bucket in the path
// (http://host/bucket/key) rather than in the host name.
func (s S3Settings) UsesPathStyle() bool {
	if s.PathStyle != nil {
		return *s.PathStyle
	}
	return s.Endpoint != ""
}

// Validate checks what can be checked before the store is reached.
func (s S3Settings) Validate() error {
	if s.Endpoint != "" {
		u, err := url.Parse(s.Endpoint)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
			return &meterstore.ConfigError{Setting: "cold.s3.endpoint", Problem: fmt.Sprintf("%q is not an http(s)://host[:port] URL", s.Endpoint),
				Fix: `write the store's address, e.g. "http://127.0.0.1:8333" (the bucket goes into cold.warehouse)`}
		}
	}
	if (s.AccessKeyID == "") != (s.SecretAccessKey == "") {
		return &meterstore.ConfigError{Setting: "cold.s3.access_key_id, cold.s3.secret_access_key", Problem: "only one of the pair is set",
			Fix: "set both, or neither to take the AWS credential chain"}
	}
	return nil
}

// Secret is a credential: it prints, logs and marshals as "[redacted]", so a
// configuration dumped into a log line, an error or a response never carries
// it. Reveal is the one way to the value, for the client that needs it.
type Secret string

const redacted = "[redacted]"

// Reveal is the secret's value.
func (s Secret) Reveal() string { return string(s) }

func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return redacted
}

// GoString keeps %#v from printing the value.
func (s Secret) GoString() string { return `"` + s.String() + `"` }

// LogValue keeps log/slog from printing the value.
func (s Secret) LogValue() slog.Value { return slog.StringValue(s.String()) }

// MarshalText keeps encoders (JSON, TOML) from writing the value.
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// UnmarshalText reads the value from a configuration file.
func (s *Secret) UnmarshalText(b []byte) error {
	*s = Secret(b)
	return nil
}

// EngineSettings tune the embedded DuckDB session every statement runs in.
type EngineSettings struct {
	// TimeZone is the session time zone (an IANA name): what a timestamp
	// literal without an offset, a ::TIMESTAMP or ::DATE cast means. Empty is
	// UTC, never the host's zone.
	TimeZone string `toml:"time_zone"`
	// ExtensionDirectory is DuckDB's extension_directory holding the pinned
	// postgres_scanner, iceberg and avro builds (go tool task extensions lays
	// them out); empty falls back to $MSQL_DUCKDB_EXTENSIONS, and without
	// either every read takes the Go paths. Nothing is ever downloaded.
	ExtensionDirectory string `toml:"extension_directory"`
	// HotPath and ColdPath pick each half's path: "default" (the faster one
	// where its extension loaded), "go", or "extension" (required: start-up
	// fails without it).
	HotPath  string `toml:"hot_path"`
	ColdPath string `toml:"cold_path"`
	// MemoryLimit caps the engine's DuckDB database ("4GB"; each scoped
	// user's database gets a fifth of it, see engine.Config.MemoryLimit); a
	// statement that needs more spills where DuckDB can and is refused where
	// it cannot. Empty is, for msql serve, half of the memory the machine (or
	// its container) has beside PostgreSQL's shared_buffers; for the other
	// commands DuckDB's default, 80 % of the machine's memory.
	MemoryLimit string `toml:"memory_limit"`
	// TempDirectory is where a statement over MemoryLimit spills; empty is
	// the system's temporary directory.
	TempDirectory string `toml:"temp_directory"`
}

// UserSettings are the accounts of `msql serve`.
type UserSettings struct {
	Name     string `toml:"name"`
	Password string `toml:"password"`
	Scope    string `toml:"scope"` // optional "column=value" confining the user's session
	// StatementTimeout is the user's default statement_timeout on the
	// PostgreSQL wire ("30s"): a statement running longer is cancelled. 0 takes
	// the server's default; a session changes its own with SET statement_timeout.
	StatementTimeout time.Duration `toml:"statement_timeout"`
	// MaxStatements is how many statements the user may run at once over
	// pgwire and Flight SQL together; one more is refused (SQLSTATE 53300).
	// 0 takes the server's default (msql serve --max-statements-per-user).
	MaxStatements int `toml:"max_statements"`
}

type fileSettings struct {
	Hot    HotSettings     `toml:"hot"`
	Cold   ColdSettings    `toml:"cold"`
	Engine EngineSettings  `toml:"engine"`
	Serve  ServeSettings   `toml:"serve"`
	Tables []tableSettings `toml:"tables"`
	Users  []UserSettings  `toml:"users"`
}

type tableSettings struct {
	Name           string          `toml:"name"`
	TimeModel      string          `toml:"time_model"`
	IdentifyByMelo *bool           `toml:"identify_by_melo"`
	SubjectColumn  string          `toml:"subject_column"`
	ExtraColumns   []extraSettings `toml:"extra_columns"`
	Hot            struct {
		PartitionStep        string `toml:"partition_step"`
		PartitionHeadroom    string `toml:"partition_headroom"`
		IntegrityConstraints *bool  `toml:"integrity_constraints"`
	} `toml:"hot"`
	Archival struct {
		SettlementLag string `toml:"settlement_lag"`
		ArchivalStep  string `toml:"archival_step"`
		ScanChunkRows int    `toml:"scan_chunk_rows"`
	} `toml:"archival"`
	Maintenance struct {
		SnapshotRetention  string `toml:"snapshot_retention"`
		MinSnapshotsToKeep int    `toml:"min_snapshots_to_keep"`
	} `toml:"maintenance"`
}

type extraSettings struct {
	Name     string   `toml:"name"`
	Identity bool     `toml:"identity"`
	Nullable *bool    `toml:"nullable"`
	Values   []string `toml:"values"`
	Check    string   `toml:"check"`
}

var envRef = regexp.MustCompile(`\$\{([A-Za-z_][A-Za-z0-9_]*)\}`)

// interpolate replaces ${VAR} with the environment's value in every string the
// file parsed into v — values, never the text, so a value holding a quote, a
// backslash or a newline arrives as it is and a comment is left alone. A
// missing variable is an error naming it and the setting.
func interpolate(v any, lookup func(string) (string, bool)) error {
	var missing []string
	walkStrings(reflect.ValueOf(v).Elem(), "", func(key string, s *string) {
		*s = envRef.ReplaceAllStringFunc(*s, func(m string) string {
			name := envRef.FindStringSubmatch(m)[1]
			val, ok := lookup(name)
			if !ok {
				missing = append(missing, fmt.Sprintf("${%s} (%s)", name, key))
			}
			return val
		})
	})
	if len(missing) > 0 {
		return &meterstore.ConfigError{Setting: "environment", Problem: "not set: " + strings.Join(missing, ", "), Fix: "export the variables or write the values into the file"}
	}
	return nil
}

// walkStrings calls f with every settable string reachable from v and its
// TOML key (struct fields by their toml tag).
func walkStrings(v reflect.Value, key string, f func(key string, s *string)) {
	switch v.Kind() {
	case reflect.String:
		// Through a copy: a named string type (Secret) is no *string.
		s := v.String()
		f(key, &s)
		v.SetString(s)
	case reflect.Pointer:
		if !v.IsNil() {
			walkStrings(v.Elem(), key, f)
		}
	case reflect.Slice:
		for i := range v.Len() {
			walkStrings(v.Index(i), key, f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			name, _, _ := strings.Cut(v.Type().Field(i).Tag.Get("toml"), ",")
			if name == "" || name == "-" {
				continue
			}
			if key != "" {
				name = key + "." + name
			}
			walkStrings(v.Field(i), name, f)
		}
	}
}

// LoadSettings reads a TOML configuration file.
func LoadSettings(path string) (Settings, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Settings{}, fmt.Errorf("read configuration: %w", err)
	}
	s, err := ParseSettings(string(b), os.LookupEnv)
	if err != nil {
		return Settings{}, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// ParseSettings parses TOML text; lookup resolves ${VAR}.
func ParseSettings(src string, lookup func(string) (string, bool)) (Settings, error) {
	var fs fileSettings
	md, err := toml.Decode(src, &fs)
	if err != nil {
		return Settings{}, &meterstore.ConfigError{Setting: "toml", Problem: err.Error(), Fix: "fix the syntax"}
	}
	if und := md.Undecoded(); len(und) > 0 {
		keys := make([]string, len(und))
		for i, k := range und {
			keys[i] = k.String()
		}
		return Settings{}, &meterstore.ConfigError{Setting: "keys", Problem: "unknown: " + strings.Join(keys, ", "), Fix: "remove or correct them (a typo is not silently ignored)"}
	}
	if err := interpolate(&fs, lookup); err != nil {
		return Settings{}, err
	}
	if tz := fs.Engine.TimeZone; tz != "" {
		if _, err := time.LoadLocation(tz); err != nil || tz == "Local" {
			return Settings{}, &meterstore.ConfigError{Setting: "engine.time_zone", Problem: fmt.Sprintf("%q is not a time zone", tz), Fix: `write an IANA name, e.g. "UTC" or "Europe/Berlin"`}
		}
	}
	for setting, v := range map[string]string{"engine.hot_path": fs.Engine.HotPath, "engine.cold_path": fs.Engine.ColdPath} {
		switch v {
		case "", "default", "go", "extension":
		default:
			return Settings{}, &meterstore.ConfigError{Setting: setting, Problem: fmt.Sprintf("%q is not a path", v), Fix: `write "default", "go" or "extension"`}
		}
	}
	if err := fs.Cold.S3.Validate(); err != nil {
		return Settings{}, err
	}
	if err := fs.Serve.validate(); err != nil {
		return Settings{}, err
	}
	out := Settings{Hot: fs.Hot, Cold: fs.Cold, Engine: fs.Engine, Serve: fs.Serve, Users: fs.Users}
	for _, ts := range fs.Tables {
		cfg, err := ts.build()
		if err != nil {
			return Settings{}, err
		}
		out.Tables = append(out.Tables, cfg)
	}
	return out, nil
}

func (ts tableSettings) build() (meterstore.TableConfig, error) {
	spec := meterstore.TableSpec{Name: ts.Name, IdentifyByMelo: ts.IdentifyByMelo, SubjectColumn: ts.SubjectColumn}
	switch ts.TimeModel {
	case "", "interval":
		spec.TimeModel = meterstore.Interval
	case "point":
		spec.TimeModel = meterstore.Point
	default:
		return meterstore.TableConfig{}, &meterstore.ConfigError{Table: ts.Name, Setting: "time_model", Problem: fmt.Sprintf("%q", ts.TimeModel), Fix: `use "interval" or "point"`}
	}
	for _, x := range ts.ExtraColumns {
		c := meterstore.Column{Name: x.Name, Values: x.Values, Nullable: !x.Identity}
		if x.Identity {
			c.Kind = meterstore.Identity
		}
		if x.Nullable != nil {
			c.Nullable = *x.Nullable
		}
		if x.Check != "" {
			vc, err := meterstore.ParseValueCheck(x.Check)
			if err != nil {
				return meterstore.TableConfig{}, &meterstore.ConfigError{Table: ts.Name, Setting: "extra_columns." + x.Name + ".check", Problem: err.Error()}
			}
			c.Check = vc
		}
		spec.Columns = append(spec.Columns, c)
	}
	durations := []struct {
		key string
		src string
		dst *time.Duration
	}{
		{"hot.partition_step", ts.Hot.PartitionStep, &spec.PartitionStep},
		{"hot.partition_headroom", ts.Hot.PartitionHeadroom, &spec.PartitionHeadroom},
		{"archival.settlement_lag", ts.Archival.SettlementLag, &spec.SettlementLag},
		{"archival.archival_step", ts.Archival.ArchivalStep, &spec.ArchivalStep},
	}
	for _, d := range durations {
		if d.src == "" {
			continue
		}
		v, err := ParseDuration(d.src)
		if err != nil {
			return meterstore.TableConfig{}, &meterstore.ConfigError{Table: ts.Name, Setting: d.key, Problem: err.Error(), Fix: `write e.g. "15m", "1h", "1d", "7d" or "10y"`}
		}
		*d.dst = v
	}
	if ts.Hot.IntegrityConstraints != nil {
		spec.DisableIntegrityConstraints = !*ts.Hot.IntegrityConstraints
	}
	spec.ScanChunkRows = ts.Archival.ScanChunkRows
	if ts.Maintenance.SnapshotRetention != "" {
		v, err := ParseDuration(ts.Maintenance.SnapshotRetention)
		if err != nil {
			return meterstore.TableConfig{}, &meterstore.ConfigError{Table: ts.Name, Setting: "maintenance.snapshot_retention", Problem: err.Error(), Fix: `write e.g. "10y"`}
		}
		spec.SnapshotRetention = v
	}
	spec.MinSnapshotsToKeep = ts.Maintenance.MinSnapshotsToKeep
	return spec.Build()
}

// ParseDuration reads the configuration's durations: Go's units plus d (24h) and
// y (365d), e.g. "1d", "14d", "10y", "15m".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if n, ok := strings.CutSuffix(s, "d"); ok {
		v, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("duration %q: %w", s, err)
		}
		return time.Duration(v) * 24 * time.Hour, nil
	}
	if n, ok := strings.CutSuffix(s, "y"); ok {
		v, err := strconv.Atoi(n)
		if err != nil {
			return 0, fmt.Errorf("duration %q: %w", s, err)
		}
		return time.Duration(v) * 365 * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q: %w", s, err)
	}
	return d, nil
}
