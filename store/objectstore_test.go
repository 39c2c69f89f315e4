package store_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awss3 "github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/shopspring/decimal"
	"github.com/stretchr/testify/require"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/engine"
	"github.com/meterstore/meterstore/internal/testrig/faultproxy"
	"github.com/meterstore/meterstore/internal/testrig/s3test"
	"github.com/meterstore/meterstore/settings"
	"github.com/meterstore/meterstore/store"
	"github.com/meterstore/meterstore/testkit"
	"github.com/meterstore/meterstore/testkit/pgtest"
)

// TestWarehouseOnObjectStore: a store whose warehouse is s3:// on a real
// S3-compatible server (SeaweedFS on loopback) archives into it — the data
// files and the table metadata are objects in the bucket — and answers from it:
// totals over both tiers, a late correction below the watermark, and one
// meter's series all equal the oracle. No session, confined or not, may name
// an s3:// file, create a secret or list secrets; the secret key is in no
// answer, no provenance and no EXPLAIN.
//
// It runs once per read path: the Go reader (meter_cold_scan, no extensions)
// and DuckDB's httpfs with the warehouse's secret (where the extensions are
// installed: go tool task extensions, as CI does); and once with no key pair
// in the settings, the credentials coming from the AWS credential chain's
// environment variables: the writers and the Go reader take them, and httpfs,
// which reaches the chain only through DuckDB's aws extension, is not used
// even where it is installed.
func TestWarehouseOnObjectStore(t *testing.T) {
	t.Run("go reader", func(t *testing.T) {
		testWarehouseOnObjectStore(t, engine.Extensions{}, "meter_cold_scan", false)
	})
	t.Run("httpfs", func(t *testing.T) {
		dir := extensionDirectory(t)
		testWarehouseOnObjectStore(t, engine.Extensions{Directory: dir}, "read_parquet (httpfs)", false)
	})
	t.Run("credential chain", func(t *testing.T) {
		dir, _ := installedExtensions(t)
		testWarehouseOnObjectStore(t, engine.Extensions{Directory: dir}, "meter_cold_scan", true)
	})
}

// fromCredentialChain moves the settings' key pair into the environment
// variables the AWS credential chain reads first, with the host's shared
// files and instance role out of reach, and returns the settings without it.
func fromCredentialChain(t *testing.T, s3 settings.S3Settings) settings.S3Settings {
	t.Setenv("AWS_ACCESS_KEY_ID", s3.AccessKeyID)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3.SecretAccessKey.Reveal())
	t.Setenv("AWS_SESSION_TOKEN", "")
	t.Setenv("AWS_PROFILE", "")
	t.Setenv("AWS_CONFIG_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_SHARED_CREDENTIALS_FILE", filepath.Join(t.TempDir(), "none"))
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	s3.AccessKeyID, s3.SecretAccessKey = "", ""
	return s3
}

// extensionDirectory is the directory `go tool task extensions` fills, or the
// environment's; the test skips when neither holds the extensions.
func extensionDirectory(t *testing.T) string {
	t.Helper()
	dir, ok := installedExtensions(t)
	if !ok {
		t.Skip("DuckDB's extensions are not installed: go tool task extensions")
	}
	return dir
}

// installedExtensions is the absolute extension directory and whether the
// extensions are installed there ("" when not).
func installedExtensions(t *testing.T) (string, bool) {
	t.Helper()
	dir := os.Getenv(engine.EnvExtensionDirectory)
	if dir == "" {
		dir = filepath.Join("..", ".cache", "duckdb-extensions")
	}
	if _, err := os.Stat(filepath.Join(dir, "installed")); err != nil {
		return "", false
	}
	abs, err := filepath.Abs(dir)
	require.NoError(t, err)
	return abs, true
}

func testWarehouseOnObjectStore(t *testing.T, ext engine.Extensions, path string, chain bool) {
	wh, s3 := s3test.Warehouse(t)
	secret := s3.SecretAccessKey.Reveal()
	if chain {
		s3 = fromCredentialChain(t, s3)
	}
	e := openOn(t, wh, s3, func(c *setup) { c.Extensions = ext }, intervalTable(t, nil))
	require.Equal(t, path, e.st.Engine().Extensions().ObjectStore, "%s", e.st.Engine().Extensions())
	tbl, _ := e.st.Table("readings_versions")
	oracle := testkit.NewOracle(tbl.Config())
	series := append(mkDays(t, day0, 3, "1"), mk(t, dl{from: day0.Add(72 * time.Hour), value: "9"}))
	_, err := e.st.Append(e.ctx, series...)
	require.NoError(t, err)
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(48*time.Hour))

	data := s3test.Files(t, wh, ".parquet")
	require.NotEmpty(t, data, "archival wrote its data files into the bucket")
	require.NotEmpty(t, s3test.Files(t, wh, ".metadata.json"), "the table metadata is in the bucket")
	for _, f := range data {
		require.True(t, strings.HasPrefix(f, wh+"/"), "%s lies under the warehouse %s", f, wh)
	}

	late := mk(t, dl{from: day0.Add(24 * time.Hour), value: "7", version: 2})
	_, err = e.st.Append(e.ctx, late)
	require.NoError(t, err, "a late correction below the watermark goes to the cold tier on S3")
	_, err = oracle.RecordSeries(late)
	require.NoError(t, err)

	all := time.Time{}
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
	cold := day0.Add(48 * time.Hour)
	require.True(t, oracle.Sum(all, cold).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings WHERE "from" < $1`, cold))),
		"the cold half alone, read from the bucket")

	res, err := e.st.Query(e.ctx, `SELECT "from", value FROM readings WHERE malo_id = $1 ORDER BY "from"`, maloA)
	require.NoError(t, err)
	var want []meterstore.Row
	for _, r := range oracle.Winners(all, all) {
		if r.MaloID == maloA {
			want = append(want, r)
		}
	}
	sort.Slice(want, func(i, j int) bool { return want[i].From.Before(want[j].From) })
	require.Len(t, res.Rows, len(want))
	for i, r := range want {
		require.True(t, r.From.Equal(res.Rows[i][0].(time.Time)), "row %d", i)
		require.True(t, r.Value.Equal(dec(t, res.Rows[i][1])), "row %d: %v, want %s", i, res.Rows[i][1], r.Value)
	}

	confined, err := e.st.Engine().Scoped("malo_id", maloA)
	require.NoError(t, err)
	scoped, err := confined.Query(e.ctx, `SELECT count(*), sum(value) FROM readings WHERE "from" < $1`, cold)
	require.NoError(t, err, "a confined session reads the cold half from the bucket")
	var wantN int64
	wantSum := decimal.Zero
	for _, r := range oracle.Winners(all, cold) {
		if r.MaloID == maloA {
			wantN++
			wantSum = wantSum.Add(r.Value)
		}
	}
	require.EqualValues(t, wantN, scoped.Rows[0][0])
	require.True(t, wantSum.Equal(dec(t, scoped.Rows[0][1])), "%v, want %s", scoped.Rows[0][1], wantSum)
	for _, q := range []string{
		`SELECT count(*) FROM '` + data[0] + `'`,
		`SELECT count(*) FROM read_parquet('` + data[0] + `')`,
		`CREATE SECRET stolen (TYPE s3, KEY_ID 'x', SECRET 'y')`,
		`SELECT * FROM duckdb_secrets()`,
	} {
		for name, h := range map[string]interface {
			Query(context.Context, string, ...any) (*engine.Result, error)
		}{"confined": confined, "unconfined": e.st.Engine()} {
			_, err := h.Query(e.ctx, q)
			require.Error(t, err, "a %s session must refuse %s", name, q)
		}
	}

	explain, err := e.st.Engine().Explain(e.ctx, `SELECT sum(value) FROM readings`)
	require.NoError(t, err)
	require.Contains(t, explain, strings.Fields(path)[0], "the cold half's path")
	prov, err := json.Marshal(res.Provenance)
	require.NoError(t, err)
	for what, text := range map[string]string{"explain": explain, "provenance": string(prov) + fmt.Sprintf("%+v", res.Provenance),
		"answer": fmt.Sprint(res.Rows), "settings": fmt.Sprintf("%+v %#v", s3, s3)} {
		require.NotContains(t, text, secret, "the secret key leaked into the %s", what)
	}
}

// proxied is the test server's settings with the endpoint through a fault
// proxy in front of it.
func proxied(t *testing.T) (string, settings.S3Settings, *faultproxy.Proxy) {
	t.Helper()
	wh, s3 := s3test.Warehouse(t)
	p, err := faultproxy.Start(strings.TrimPrefix(s3.Endpoint, "http://"))
	require.NoError(t, err)
	t.Cleanup(p.Close)
	s3.Endpoint = "http://" + p.Addr()
	return wh, s3, p
}

// TestObjectStoreSettingsErrors: a deployment that cannot reach its
// warehouse fails when it opens, with the setting to fix — wrong credentials,
// a missing bucket, an endpoint that is down, one that is too slow — and the
// secret key in none of the errors.
func TestObjectStoreSettingsErrors(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	wh, good, p := proxied(t)
	wrongSecret := good
	wrongSecret.SecretAccessKey = "not-the-secret-0123456789"
	wrongKey := good
	wrongKey.AccessKeyID = "no-such-key"
	slow := good
	slow.RequestTimeout = 300 * time.Millisecond
	cases := []struct {
		name    string
		wh      string
		s3      settings.S3Settings
		fault   func()
		setting string
	}{
		{"wrong secret", wh, wrongSecret, nil, "cold.s3.access_key_id, cold.s3.secret_access_key"},
		{"unknown key", wh, wrongKey, nil, "cold.s3.access_key_id, cold.s3.secret_access_key"},
		{"missing bucket", "s3://no-such-bucket-" + strings.ToLower(t.Name()[:4]) + "/warehouse", good, nil, "cold.warehouse"},
		{"endpoint down", wh, good, p.Down, "cold.s3.endpoint"},
		{"endpoint slow", wh, slow, func() { p.Delay(2 * time.Second) }, "cold.s3.request_timeout"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.NoError(t, p.Clear())
			if c.fault != nil {
				c.fault()
			}
			cat, err := catalog.Open(ctx, catalog.Options{DSN: dsn, Warehouse: c.wh, S3: c.s3})
			if err == nil {
				cat.Close()
			}
			var ose *catalog.ObjectStoreError
			require.ErrorAs(t, err, &ose)
			require.Equal(t, c.setting, ose.Setting, "%v", err)
			require.NotContains(t, err.Error(), c.s3.SecretAccessKey.Reveal())
			require.NotContains(t, err.Error(), good.SecretAccessKey.Reveal())
			t.Log(err)
		})
	}
	require.NoError(t, p.Clear())
	cat, err := catalog.Open(ctx, catalog.Options{DSN: dsn, Warehouse: wh, S3: good})
	require.NoError(t, err, "the same settings without a fault open")
	cat.Close()
}

// TestArchivalUploadCutHalfway: the connection to the object store is cut
// while archival uploads its data file. The archival fails naming the
// endpoint, commits nothing (the watermark stays, PostgreSQL keeps the rows,
// answers are unchanged), and no file the table references is missing or
// short; the next run, with the network back, archives the same partitions.
// The cut comes after half a data file's bytes on every connection, so
// requests smaller than that succeed when the SDK retries them on a fresh
// connection, and the data file's upload never does.
func TestArchivalUploadCutHalfway(t *testing.T) {
	wh, s3, p := proxied(t)
	e := openOn(t, wh, s3, nil, intervalTable(t, nil))
	tbl, _ := e.st.Table("readings_versions")
	oracle := testkit.NewOracle(tbl.Config())
	var series []meterstore.StoredSeries
	for _, malo := range []string{maloA, maloB} {
		for d := range 3 {
			series = append(series, mk(t, dl{malo: malo, from: day0.Add(time.Duration(d) * 24 * time.Hour), n: 96, value: "0.125", step: "0.001"}))
		}
	}
	_, err := e.st.Append(e.ctx, series...)
	require.NoError(t, err)
	_, err = oracle.RecordSeries(series...)
	require.NoError(t, err)
	e.archiveThrough(t, tbl, day0.Add(24*time.Hour))
	before := len(s3test.Files(t, wh, ".parquet"))
	first, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	require.NotEmpty(t, first)
	// Half the first window's file: the next window's file (two days, no
	// smaller) is cut inside its upload, on every connection the SDK retries.
	cut := first[0].SizeBytes / 2
	p.CutAfter(cut)
	_, err = tbl.Archive(e.ctx, day0.Add(72*time.Hour).Add(tbl.Config().SettlementLag()), 0)
	require.Error(t, err, "archival through a connection cut mid-upload must fail")
	require.Positive(t, p.Cuts())
	var ose *catalog.ObjectStoreError
	require.ErrorAs(t, err, &ose, "%v", err)
	require.Equal(t, "cold.s3.endpoint", ose.Setting)
	t.Log(err)
	require.NoError(t, p.Clear())

	w, err := tbl.Watermark(e.ctx)
	require.NoError(t, err)
	require.True(t, w.Equal(day0.Add(24*time.Hour)), "the watermark stays: %s", w)
	all := time.Time{}
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
	requireReferencedFilesWhole(t, e, tbl)

	e.archiveThrough(t, tbl, day0.Add(72*time.Hour))
	require.Equal(t, int64(oracle.RowCount(all, all)), e.scalar(t, `SELECT count(*) FROM readings`))
	require.True(t, oracle.Sum(all, all).Equal(dec(t, e.scalar(t, `SELECT sum(value) FROM readings`))))
	requireReferencedFilesWhole(t, e, tbl)
	e.healthy(t, tbl)
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	var big bool
	for _, f := range files {
		big = big || f.SizeBytes > cut
	}
	require.True(t, big, "some data file is larger than the cut, so the cut fell inside its upload")
	require.Greater(t, len(s3test.Files(t, wh, ".parquet")), before)
}

// requireReferencedFilesWhole checks every data file of the current snapshot
// exists in the bucket with the size the manifest records.
func requireReferencedFilesWhole(t *testing.T, e *env, tbl *store.Table) {
	t.Helper()
	files, _, err := tbl.Cold().PlanFiles(e.ctx, catalog.PlanRequest{})
	require.NoError(t, err)
	client := s3test.Start(t).Client()
	for _, f := range files {
		key, ok := strings.CutPrefix(f.Path, "s3://"+s3test.Bucket+"/")
		require.True(t, ok, f.Path)
		head, err := client.HeadObject(e.ctx, &awss3.HeadObjectInput{Bucket: aws.String(s3test.Bucket), Key: aws.String(key)})
		require.NoError(t, err, "referenced file %s", f.Path)
		require.Equal(t, f.SizeBytes, aws.ToInt64(head.ContentLength), "referenced file %s is whole", f.Path)
	}
}
