package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/meterstore/meterstore/catalog"
	"github.com/meterstore/meterstore/settings"
)

// expected is what every foreign reader must find. The totals come from
// msql on the same deployment; the harness checks them against the testkit
// oracle before any program runs, so a program comparing with them compares
// with an independent answer too.
type expected struct {
	Watermark string `json:"watermark"` // RFC 3339, UTC
	Table     string `json:"table"`     // readings_versions
	View      string `json:"view"`      // readings
	// Cold: what the Iceberg tables hold (from < watermark), the only rows a
	// reader through the catalog sees.
	ColdResolved []total `json:"cold_resolved"`
	ColdNaive    []total `json:"cold_naive"`
	// ColdSuperseded: rows of readings_versions below the watermark that a
	// later version replaced — the naive count's excess, and their values the
	// naive sum's excess.
	ColdSupersededRows int64  `json:"cold_superseded_rows"`
	ColdSupersededSum  string `json:"cold_superseded_sum"`
	// All: both tiers through readings, what pgwire and Flight SQL answer.
	AllResolved []total `json:"all_resolved"`
	// Precise: readings whose value uses all six decimals, to be read back exact.
	Precise []preciseValue `json:"precise"`
	// Rows of readings over both tiers (a result large enough to need many fetches).
	AllRows int64 `json:"all_rows"`
	// Layout as MeterStore writes it.
	Fields        []field        `json:"fields"`
	PartitionSpec []partField    `json:"partition_spec"`
	SortOrder     []sortField    `json:"sort_order"`
	Provenance    provenanceLine `json:"provenance"`
	Tenants       []string       `json:"tenants"`
}

type total struct {
	Tenant string `json:"tenant"`
	Month  string `json:"month"` // balancing month, YYYY-MM
	Sum    string `json:"sum"`   // exact decimal text
	Rows   int64  `json:"rows"`
}

type preciseValue struct {
	MaloID   string `json:"malo_id"`
	ObisCode string `json:"obis_code"`
	From     string `json:"from"`
	Tenant   string `json:"tenant"`
	Value    string `json:"value"`
}

type field struct {
	ID       int    `json:"id"`
	Name     string `json:"name"`
	Type     string `json:"type"`
	Required bool   `json:"required"`
}

type partField struct {
	SourceID  int    `json:"source_id"`
	Source    string `json:"source"`
	Transform string `json:"transform"`
	Name      string `json:"name"`
}

type sortField struct {
	SourceID  int    `json:"source_id"`
	Source    string `json:"source"`
	Direction string `json:"direction"`
	NullOrder string `json:"null_order"`
}

type provenanceLine struct {
	SQL       string `json:"sql"`
	Watermark string `json:"watermark"`
	Tiers     string `json:"tiers"`
	Mode      string `json:"mode"`
}

func parseCSV(s string) ([][]string, error) {
	recs, err := csv.NewReader(strings.NewReader(s)).ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	return recs[1:], nil
}

const totalsSQL = `SELECT tenant, strftime(date_trunc('month', balancing_day), '%%Y-%%m') AS month,
	CAST(sum(value) AS VARCHAR) AS total, count(*) AS n
	FROM %s %s GROUP BY ALL ORDER BY ALL`

func (d *deployment) totals(ctx context.Context, rel, where string) ([]total, error) {
	rows, err := d.msqlQuery(ctx, fmt.Sprintf(totalsSQL, rel, where))
	if err != nil {
		return nil, err
	}
	out := make([]total, 0, len(rows))
	for _, r := range rows {
		var t total
		t.Tenant, t.Month, t.Sum = r[0], r[1], r[2]
		if _, err := fmt.Sscan(r[3], &t.Rows); err != nil {
			return nil, fmt.Errorf("count %q: %w", r[3], err)
		}
		out = append(out, t)
	}
	return out, nil
}

func (d *deployment) writeExpected(ctx context.Context, opt options) error {
	var e expected
	e.Table, e.View = "readings_versions", "readings"
	wm, err := d.msqlQuery(ctx, `SELECT strftime(watermark AT TIME ZONE 'UTC', '%Y-%m-%dT%H:%M:%SZ') FROM system.tables WHERE physical_table = 'readings_versions'`)
	if err != nil {
		return err
	}
	if len(wm) != 1 || wm[0][0] == "" {
		return fmt.Errorf("system.tables has no watermark for readings_versions: %v", wm)
	}
	e.Watermark = wm[0][0]
	cold := fmt.Sprintf(`WHERE "from" < TIMESTAMPTZ '%s'`, e.Watermark)
	if e.ColdResolved, err = d.totals(ctx, "readings", cold); err != nil {
		return err
	}
	if e.ColdNaive, err = d.totals(ctx, "readings_versions", cold); err != nil {
		return err
	}
	if e.AllResolved, err = d.totals(ctx, "readings", ""); err != nil {
		return err
	}
	sup, err := d.msqlQuery(ctx, fmt.Sprintf(`SELECT count(*), CAST(coalesce(sum(value), 0) AS VARCHAR) FROM readings_versions v %s
		AND EXISTS (SELECT 1 FROM readings_versions w WHERE w.malo_id = v.malo_id AND w.obis_code = v.obis_code
		AND w."from" = v."from" AND w.tenant = v.tenant AND w.version_scope = v.version_scope AND w.version > v.version)`,
		strings.Replace(cold, "WHERE ", "WHERE v.", 1)))
	if err != nil {
		return err
	}
	fmt.Sscan(sup[0][0], &e.ColdSupersededRows)
	e.ColdSupersededSum = sup[0][1]
	if e.ColdSupersededRows == 0 {
		return fmt.Errorf("the portfolio has no late corrections below the watermark %s: raise -correction-rate", e.Watermark)
	}
	prec, err := d.msqlQuery(ctx, fmt.Sprintf(`SELECT malo_id, obis_code, strftime("from" AT TIME ZONE 'UTC', '%%Y-%%m-%%dT%%H:%%M:%%SZ'), tenant,
		CAST(value AS VARCHAR) FROM readings %s AND CAST(value * 1000000 AS BIGINT) %% 10 <> 0 AND value <> 0
		ORDER BY malo_id, obis_code, "from", tenant LIMIT 25`, cold))
	if err != nil {
		return err
	}
	for _, r := range prec {
		e.Precise = append(e.Precise, preciseValue{r[0], r[1], r[2], r[3], r[4]})
	}
	n, err := d.msqlQuery(ctx, `SELECT count(*) FROM readings`)
	if err != nil {
		return err
	}
	fmt.Sscan(n[0][0], &e.AllRows)
	ten, err := d.msqlQuery(ctx, `SELECT DISTINCT tenant FROM readings ORDER BY 1`)
	if err != nil {
		return err
	}
	for _, r := range ten {
		e.Tenants = append(e.Tenants, r[0])
	}
	if e.Provenance, err = d.provenance(ctx); err != nil {
		return err
	}
	if err := e.layout(d.config); err != nil {
		return err
	}
	if err := d.checkOracle(ctx, opt, &e); err != nil {
		return err
	}
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	d.expected = filepath.Join(d.work, "expected.json")
	return os.WriteFile(d.expected, b, 0o644)
}

// provenanceSQL is the statement whose provenance msql reports and the Flight
// SQL schema must repeat.
const provenanceSQL = `SELECT tenant, count(*) AS n FROM readings GROUP BY tenant ORDER BY tenant`

var reProvenance = regexp.MustCompile(`watermark (\S+) · tiers (\S+) · mode (\S+)`)

func (d *deployment) provenance(ctx context.Context) (provenanceLine, error) {
	out, err := d.msqlOutput(ctx, "--config", d.config, "--format", "table", "-c", provenanceSQL)
	if err != nil {
		return provenanceLine{}, err
	}
	m := reProvenance.FindStringSubmatch(out)
	if m == nil {
		return provenanceLine{}, fmt.Errorf("msql printed no provenance line for %q:\n%s", provenanceSQL, out)
	}
	return provenanceLine{SQL: provenanceSQL, Watermark: m[1], Tiers: m[2], Mode: m[3]}, nil
}

// layout is the schema, partition spec and sort order as the catalog package
// declares them for the configured table.
func (e *expected) layout(config string) error {
	s, err := settings.LoadSettings(config)
	if err != nil {
		return err
	}
	cfg := s.Tables[0]
	sc := catalog.Schema(cfg)
	for _, f := range sc.Fields() {
		e.Fields = append(e.Fields, field{f.ID, f.Name, f.Type.String(), f.Required})
	}
	spec, err := catalog.PartitionSpec(cfg, sc)
	if err != nil {
		return err
	}
	for _, f := range spec.Fields() {
		src, _ := sc.FindColumnName(f.SourceID())
		e.PartitionSpec = append(e.PartitionSpec, partField{f.SourceID(), src, f.Transform.String(), f.Name})
	}
	so, err := catalog.SortOrder(sc)
	if err != nil {
		return err
	}
	for _, f := range so.Fields() {
		src, _ := sc.FindColumnName(f.SourceID())
		e.SortOrder = append(e.SortOrder, sortField{f.SourceID(), src, string(f.Direction), string(f.NullOrder)})
	}
	sort.SliceStable(e.Fields, func(i, j int) bool { return e.Fields[i].ID < e.Fields[j].ID })
	return nil
}
