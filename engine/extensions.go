package engine

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/meterstore/meterstore/engine/plan"
	"github.com/meterstore/meterstore/internal/sqltext"
	"github.com/meterstore/meterstore/settings"
)

// Extensions are DuckDB's postgres and iceberg extensions: optional, loaded
// only from a local directory the operator filled (`go tool task extensions`
// lays the pinned builds out there), never downloaded by the engine. Without
// them every statement takes the Go paths, which are always present.
type Extensions struct {
	// Directory is DuckDB's extension_directory: it holds
	// <Directory>/<DuckDB version>/<platform>/<name>.duckdb_extension.
	// "" means none: the Go paths only.
	Directory string
	// Hot and Cold choose each half's path: PathDefault takes the faster one
	// (measured side by side in benchmarks/RESULTS.md) when its extension
	// loaded; PathExtension requires the extension (Open fails without it);
	// PathGo never uses it.
	Hot, Cold PathChoice
	// Postgres is the deployment's PostgreSQL, attached read-only through the
	// postgres extension for the hot half; zero leaves it unattached (the hot
	// half then takes the Go path).
	Postgres PostgresConn
	// Also names further extensions loaded from Directory into every
	// database (httpfs for object storage, say); one missing is reported at
	// start-up like the others.
	Also []string
	// ObjectStore reaches a warehouse on object storage (nil: a local one).
	// With httpfs loaded and a key pair set, every database gets it as a
	// temporary S3 secret and reads the cold files itself, through the cold
	// half's path; otherwise the Go reader (meter_cold_scan) reads them.
	ObjectStore *settings.S3Settings
}

// PathChoice picks how one half of the tier split is read.
type PathChoice uint8

const (
	PathDefault   PathChoice = iota // the faster path by the benchmarks, where available
	PathGo                          // meter_hot_scan / read_parquet of the planned files
	PathExtension                   // the postgres / iceberg extension; Open fails without it
)

// ParsePathChoice reads "default", "go" or "extension".
func ParsePathChoice(s string) (PathChoice, error) {
	switch strings.ToLower(s) {
	case "", "default":
		return PathDefault, nil
	case "go":
		return PathGo, nil
	case "extension":
		return PathExtension, nil
	}
	return 0, fmt.Errorf("path %q: use default, go or extension", s)
}

// PostgresConn is what the postgres extension needs to reach the hot tier's
// database. The password goes into a DuckDB secret, so it appears in no
// catalog view of the attached database.
type PostgresConn struct {
	Host     string
	Port     uint16
	Database string
	User     string
	Password string
	SSLMode  string            // libpq's sslmode; "" = prefer
	Options  map[string]string // run-time parameters (search_path, …), sent as libpq options
}

func (c PostgresConn) zero() bool { return c.Host == "" && c.Database == "" && c.User == "" }

// extension names as DuckDB loads them; iceberg reads its manifests with avro.
const (
	extPostgres = "postgres_scanner"
	extAvro     = "avro"
	extIceberg  = "iceberg"
	extHTTPFS   = "httpfs"
)

// coldSecret is the name of the temporary secret httpfs reads the warehouse
// with; statements cannot reach it (the gate refuses secrets' functions).
const coldSecret = "meterstore_cold"

// ExtensionStatus is what an engine loaded, decided once when it opened.
type ExtensionStatus struct {
	Directory string            // the extension directory ("" = none configured)
	Platform  string            // DuckDB's version/platform, e.g. v1.5.5/linux_amd64
	Loaded    []LoadedExtension // loaded from Directory, in order
	Hot, Cold string            // the path each half takes (a hotPath/coldPath name)
	// ObjectStore is how cold files on object storage are read: the cold
	// path through httpfs, or meter_cold_scan; "" for a local warehouse.
	ObjectStore string
	// Missing says, per extension path not taken, why (nil when none is missing).
	Missing []string
}

// LoadedExtension is one extension an engine loaded.
type LoadedExtension struct{ Name, Version string }

func (l LoadedExtension) String() string { return strings.TrimSpace(l.Name + " " + l.Version) }

// Has says whether the extension name loaded.
func (s ExtensionStatus) Has(name string) bool {
	return slices.ContainsFunc(s.Loaded, func(l LoadedExtension) bool { return l.Name == name })
}

// String is the one line the engine logs when it opens.
func (s ExtensionStatus) String() string {
	line := fmt.Sprintf("hot tier through %s, cold tier through %s", s.Hot, s.Cold)
	if len(s.Loaded) > 0 {
		names := make([]string, len(s.Loaded))
		for i, l := range s.Loaded {
			names[i] = l.String()
		}
		line += "; DuckDB extensions loaded from " + s.Directory + ": " + strings.Join(names, ", ")
	}
	if len(s.Missing) > 0 {
		line += "; " + strings.Join(s.Missing, "; ")
	}
	if s.ObjectStore != "" {
		line += "; cold files on object storage through " + s.ObjectStore
	}
	return line
}

// Extensions is what the engine loaded and the path each half takes.
func (e *Engine) Extensions() ExtensionStatus { return e.shared.ext.status }

// extensionState is the engine's decision, made on its first database
// (a confined database loads no extension).
type extensionState struct {
	status   ExtensionStatus
	postgres bool // postgres_scanner loaded and the hot database attached
	iceberg  bool // avro and iceberg loaded
	httpfs   bool // httpfs loaded and the warehouse's secret created
	hot      plan.HotPath
	cold     plan.ColdPath
}

// loadExtensions loads what the configuration asks for into the engine's
// first database and decides the paths; a missing extension is a reason
// logged once. A later database is a confined one, which loads none: no
// extension, attached database or secret gives a confined session a way to
// open files, databases or URLs of its own.
func (e *Engine) loadExtensions(ctx context.Context, conn *sql.Conn, first bool) error {
	x := e.cfg.Extensions
	st := &e.ext
	if !first {
		return nil
	}
	if x.Directory == "" {
		st.status = ExtensionStatus{Missing: []string{"no DuckDB extension directory configured (go tool task extensions fills one)"}}
		return st.decide(x)
	}
	for _, q := range []string{
		"SET GLOBAL extension_directory = " + sqltext.String(x.Directory),
		"SET GLOBAL autoinstall_known_extensions = false",
		"SET GLOBAL autoload_known_extensions = false",
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return fmt.Errorf("%s: %w", q, err)
		}
	}
	st.status = ExtensionStatus{Directory: x.Directory}
	var version, platform string
	if err := conn.QueryRowContext(ctx, "SELECT library_version, platform FROM pragma_version(), pragma_platform()").Scan(&version, &platform); err != nil {
		return fmt.Errorf("read DuckDB's version and platform: %w", err)
	}
	st.status.Platform = version + "/" + platform
	dir := filepath.Join(x.Directory, version, platform)
	if st.load(ctx, conn, dir, extPostgres) {
		if x.Postgres.zero() {
			st.status.Missing = append(st.status.Missing, "postgres: no PostgreSQL to attach")
		} else if err := attachHot(ctx, conn, x.Postgres, plan.HotDatabase); err != nil {
			st.status.Missing = append(st.status.Missing, "postgres: "+err.Error())
		} else {
			st.postgres = true
		}
	}
	st.iceberg = st.load(ctx, conn, dir, extAvro, extIceberg)
	for _, name := range x.Also {
		st.load(ctx, conn, dir, name)
	}
	if err := st.objectStore(ctx, conn, x.ObjectStore); err != nil {
		return err
	}
	return st.decide(x)
}

// objectStore creates the warehouse's secret where httpfs loaded, or says
// why the cold files on object storage take the Go reader.
func (st *extensionState) objectStore(ctx context.Context, conn *sql.Conn, s3 *settings.S3Settings) error {
	switch {
	case s3 == nil:
		return nil
	case !st.status.Has(extHTTPFS):
		st.status.Missing = append(st.status.Missing, "httpfs not loaded: cold files on object storage through the Go reader")
	case s3.AccessKeyID == "":
		// DuckDB reaches the AWS credential chain only through its aws
		// extension, which is not among the pinned ones.
		st.status.Missing = append(st.status.Missing, "httpfs: no key pair in [cold.s3] (the AWS credential chain is read by the Go reader only)")
	default:
		if err := createColdSecret(ctx, conn, *s3); err != nil {
			return err
		}
		st.httpfs = true
	}
	return nil
}

// createColdSecret gives the database the warehouse's credentials as a
// temporary secret (never persisted; redacted by duckdb_secrets()).
func createColdSecret(ctx context.Context, conn *sql.Conn, s3 settings.S3Settings) error {
	opts := []string{"TYPE s3", "KEY_ID " + sqltext.String(s3.AccessKeyID), "SECRET " + sqltext.String(s3.SecretAccessKey.Reveal())}
	if t := s3.SessionToken.Reveal(); t != "" {
		opts = append(opts, "SESSION_TOKEN "+sqltext.String(t))
	}
	if s3.Region != "" {
		opts = append(opts, "REGION "+sqltext.String(s3.Region))
	}
	if s3.Endpoint != "" {
		u, err := url.Parse(s3.Endpoint)
		if err != nil {
			return fmt.Errorf("cold.s3.endpoint: %w", err)
		}
		opts = append(opts, "ENDPOINT "+sqltext.String(u.Host), fmt.Sprintf("USE_SSL %t", u.Scheme == "https"))
	}
	style := "vhost"
	if s3.UsesPathStyle() {
		style = "path"
	}
	opts = append(opts, "URL_STYLE "+sqltext.String(style))
	q := fmt.Sprintf("CREATE OR REPLACE TEMPORARY SECRET %s (%s)", coldSecret, strings.Join(opts, ", "))
	if _, err := conn.ExecContext(ctx, q); err != nil {
		// Not %w: DuckDB's error may quote the statement, secret and all.
		return fmt.Errorf("create the warehouse's secret for httpfs: %s", redactSecret(err.Error(), s3))
	}
	return nil
}

// redactSecret removes the credentials from text.
func redactSecret(text string, s3 settings.S3Settings) string {
	for _, v := range []string{s3.SecretAccessKey.Reveal(), s3.SessionToken.Reveal()} {
		if v != "" {
			text = strings.ReplaceAll(text, v, "[redacted]")
		}
	}
	return text
}

// load loads the named extensions from dir, in order, and says whether all
// loaded; the first that is missing or refused is recorded as the reason.
func (st *extensionState) load(ctx context.Context, conn *sql.Conn, dir string, names ...string) bool {
	for _, name := range names {
		if st.status.Has(name) {
			continue
		}
		file := filepath.Join(dir, name+".duckdb_extension")
		if _, err := os.Stat(file); err != nil {
			st.status.Missing = append(st.status.Missing, fmt.Sprintf("%s: not found in %s", name, dir))
			return false
		}
		if _, err := conn.ExecContext(ctx, "LOAD "+name); err != nil {
			st.status.Missing = append(st.status.Missing, fmt.Sprintf("%s: load %s: %v", name, file, err))
			return false
		}
		st.status.Loaded = append(st.status.Loaded, loadedVersion(ctx, conn, name))
	}
	return true
}

func loadedVersion(ctx context.Context, conn *sql.Conn, name string) LoadedExtension {
	var v sql.NullString
	_ = conn.QueryRowContext(ctx, "SELECT extension_version FROM duckdb_extensions() WHERE extension_name = ?", name).Scan(&v)
	return LoadedExtension{Name: name, Version: v.String}
}

// Each half's default path where its extension loaded (true: the
// extension's), from the side-by-side figures in benchmarks/RESULTS.md
// ("Extension paths"). The cold half stays on read_parquet: iceberg_scan
// plans again from the manifests and measured slower. The hot half stays on
// meter_hot_scan although postgres_query measured faster: postgres_query
// reads a half in one PostgreSQL statement, whose lock on the partitions
// holds an archival's DETACH — and every write queued behind that — until
// the reader has taken the last row, so one slow client of a stream stalls
// ingestion; meter_hot_scan's short page queries let archival through, and
// the boundary check turns the moved watermark into ErrBoundaryMoved.
const (
	defaultHotPath  = false
	defaultColdPath = false
)

// decide picks each half's path from the choice and what loaded.
func (st *extensionState) decide(x Extensions) error {
	var err error
	st.hot, err = choose(x.Hot, st.postgres, defaultHotPath, plan.MeterHotScan, plan.PostgresQuery, "hot", "postgres")
	if err != nil {
		return err
	}
	st.cold, err = choose(x.Cold, st.iceberg, defaultColdPath, plan.ReadParquet, plan.IcebergScan, "cold", "iceberg")
	if err != nil {
		return err
	}
	st.status.Hot, st.status.Cold = st.hot.Name(), st.cold.Name()
	if x.ObjectStore != nil {
		st.status.ObjectStore = plan.MeterColdScan
		if st.httpfs {
			st.status.ObjectStore = st.cold.Name() + " (httpfs)"
		}
	}
	return nil
}

// ErrExtensionMissing is Open's error when a half is required to take an
// extension path that could not be loaded.
var ErrExtensionMissing = errors.New("DuckDB extension not available")

func choose[P interface{ Name() string }](c PathChoice, loaded bool, def bool, goPath, extPath P, half, ext string) (P, error) {
	switch c {
	case PathGo:
		return goPath, nil
	case PathExtension:
		if !loaded {
			return goPath, fmt.Errorf("%w: the %s half is configured to take the %s extension path", ErrExtensionMissing, half, ext)
		}
		return extPath, nil
	}
	if loaded && def {
		return extPath, nil
	}
	return goPath, nil
}

// attachHot attaches the deployment's PostgreSQL read-only under name, its
// password in a temporary secret of the same name.
func attachHot(ctx context.Context, conn *sql.Conn, pg PostgresConn, name string) error {
	secret := []string{"TYPE postgres"}
	add := func(k, v string) {
		if v != "" {
			secret = append(secret, k+" "+sqltext.String(v))
		}
	}
	add("HOST", pg.Host)
	if pg.Port != 0 {
		add("PORT", fmt.Sprint(pg.Port))
	}
	add("DATABASE", pg.Database)
	add("USER", pg.User)
	add("PASSWORD", pg.Password)
	q := fmt.Sprintf("CREATE OR REPLACE TEMPORARY SECRET %s (%s)", name, strings.Join(secret, ", "))
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("create the secret of the hot database: %w", err)
	}
	q = fmt.Sprintf("ATTACH %s AS %s (TYPE postgres, SECRET %s, READ_ONLY)", sqltext.String(pg.libpqParams()), name, name)
	if _, err := conn.ExecContext(ctx, q); err != nil {
		return fmt.Errorf("attach the hot tier's PostgreSQL through the postgres extension: %w", err)
	}
	return nil
}

// ErrConfined is AttachHot's refusal on a confined handle.
var ErrConfined = errors.New("a confined session cannot attach databases")

// AttachHot attaches the deployment's PostgreSQL, read-only, to the
// unrestricted database DB() as name, so an operator can read PostgreSQL's
// own tables (name.public.…) through the postgres extension. Statements of
// the engine never reach it: the gate refuses every other database.
func (e *Engine) AttachHot(ctx context.Context, name string) error {
	if e.Confined() {
		return ErrConfined
	}
	if !e.shared.ext.status.Has(extPostgres) || e.cfg.Extensions.Postgres.zero() {
		return fmt.Errorf("%w: postgres_scanner is not loaded (%s)", ErrExtensionMissing, e.shared.ext.status)
	}
	if !identifier.MatchString(name) || name == plan.HotDatabase {
		return fmt.Errorf("attach the hot tier as %q: a plain lowercase name other than %s", name, plan.HotDatabase)
	}
	conn, err := e.shared.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	return attachHot(ctx, conn, e.cfg.Extensions.Postgres, name)
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]*$`)

// libpqParams is the part of the connection the secret does not carry, as a
// libpq key/value string.
func (c PostgresConn) libpqParams() string {
	var kv []string
	if c.SSLMode != "" {
		kv = append(kv, "sslmode="+libpqValue(c.SSLMode))
	}
	if len(c.Options) > 0 {
		keys := make([]string, 0, len(c.Options))
		for k := range c.Options {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var opts []string
		for _, k := range keys {
			opts = append(opts, "-c "+k+"="+strings.ReplaceAll(c.Options[k], " ", `\ `))
		}
		kv = append(kv, "options="+libpqValue(strings.Join(opts, " ")))
	}
	return strings.Join(kv, " ")
}

// libpqValue quotes a value of a libpq key/value connection string.
func libpqValue(v string) string {
	return "'" + strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(v) + "'"
}

// The environment variables ExtensionsFromEnv reads.
const (
	EnvExtensionDirectory = "MSQL_DUCKDB_EXTENSIONS" // the extension directory
	EnvPaths              = "MSQL_PATHS"             // default, go or extension: both halves
)

// ExtensionsFromEnv is the extension configuration the environment asks for:
// how the test helpers run a whole suite through the extensions' paths
// (MSQL_DUCKDB_EXTENSIONS=.cache/duckdb-extensions MSQL_PATHS=extension), and
// how msql is pointed at a directory without a configuration file. A relative
// directory is taken from the working directory, or from the module root when
// the working directory is a package inside it (as under go test).
func ExtensionsFromEnv() (Extensions, error) {
	var x Extensions
	dir := os.Getenv(EnvExtensionDirectory)
	if dir != "" && !filepath.IsAbs(dir) {
		dir = moduleRelative(dir)
	}
	x.Directory = dir
	c, err := ParsePathChoice(os.Getenv(EnvPaths))
	if err != nil {
		return x, fmt.Errorf("%s: %w", EnvPaths, err)
	}
	x.Hot, x.Cold = c, c
	return x, nil
}

// moduleRelative resolves a relative path against the nearest directory at
// or above the working directory where it exists.
func moduleRelative(p string) string {
	wd, err := os.Getwd()
	if err != nil {
		return p
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, p)); err == nil {
			return filepath.Join(d, p)
		}
		if filepath.Dir(d) == d {
			return filepath.Join(wd, p)
		}
	}
}
