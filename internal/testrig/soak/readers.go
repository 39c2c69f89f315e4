package soak

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow-go/v18/arrow/flight/flightsql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shopspring/decimal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/metering"
	"github.com/meterstore/meterstore/testkit"
)

// answer is one query's result as text, and the watermark its provenance
// reported.
type answer struct {
	cols      []string
	watermark time.Time
}

// client runs a statement over one protocol as one user.
type client interface {
	query(ctx context.Context, sql string) (answer, error)
	close()
}

// question is a statement and what the oracle says it must return.
type question struct {
	kind string
	sql  string
	// expect computes the answer from the oracle; it runs while the locks
	// the question holds keep the writers of what it reads out.
	expect func(o *testkit.Oracle) []string
	hold   func(l *ledger) func()
}

// reader asks questions in a loop and checks each answer against the oracle.
type reader struct {
	name   string
	dial   func(ctx context.Context) (client, error)
	tenant string // "" unscoped
	ledger *ledger
	malos  []string
	days   [2]metering.Date
	rng    *rand.Rand
	stats  *stats
	lastWM time.Time
}

func (r *reader) run(ctx context.Context) {
	var c client
	defer func() {
		if c != nil {
			c.close()
		}
	}()
	for ctx.Err() == nil {
		if c == nil {
			var err error
			if c, err = r.dial(ctx); err != nil {
				r.stats.readError(r.name, "connect", err)
				sleep(ctx, 500*time.Millisecond)
				continue
			}
		}
		q := r.question()
		took, err := r.ask(ctx, c, q)
		if err != nil {
			r.stats.readError(r.name, q.kind, err)
			c.close()
			c = nil
			sleep(ctx, 200*time.Millisecond)
			continue
		}
		r.stats.read(q.kind, took)
	}
}

// ask runs q while its locks are held and compares the answer with the
// oracle's. A failed request must be an error, never a different number.
func (r *reader) ask(ctx context.Context, c client, q question) (time.Duration, error) {
	release := q.hold(r.ledger)
	defer release()
	qctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	start := time.Now()
	got, err := c.query(qctx, q.sql)
	took := time.Since(start)
	if err != nil {
		return took, err
	}
	var want []string
	r.ledger.view(func(o *testkit.Oracle) { want = q.expect(o) })
	if !sameAnswer(got.cols, want) {
		r.stats.fail(fmt.Sprintf("%s: %s at watermark %s answered %v, the oracle %v", r.name, q.sql, got.watermark.Format(time.RFC3339), got.cols, want))
	}
	if got.watermark.Before(r.lastWM) {
		r.stats.fail(fmt.Sprintf("%s: provenance watermark moved back from %s to %s", r.name, r.lastWM.Format(time.RFC3339), got.watermark.Format(time.RFC3339)))
	}
	r.lastWM = got.watermark
	return took, nil
}

func sameAnswer(got, want []string) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range got {
		a, errA := decimal.NewFromString(got[i])
		b, errB := decimal.NewFromString(want[i])
		if errA != nil || errB != nil || !a.Equal(b) {
			return false
		}
	}
	return true
}

func (r *reader) question() question {
	switch r.rng.IntN(4) {
	case 0:
		return question{kind: "resolved sum", hold: (*ledger).holdAll,
			sql:    `SELECT CAST(count(*) AS VARCHAR), coalesce(CAST(sum(value) AS VARCHAR), '0') FROM readings`,
			expect: func(o *testkit.Oracle) []string { return countSum(o, r.tenant, "") }}
	case 1:
		from, to := r.days[0], r.days[1]
		return question{kind: "completeness", hold: (*ledger).holdAll,
			sql: fmt.Sprintf(`SELECT CAST(count(*) FILTER (WHERE NOT complete) AS VARCHAR), CAST(coalesce(sum(missing), 0) AS VARCHAR), CAST(coalesce(sum(surplus), 0) AS VARCHAR) FROM meter_completeness('%s', '%s')`, from, to),
			expect: func(o *testkit.Oracle) []string {
				var incomplete, missing, surplus int
				for _, c := range o.Completeness(from, to) {
					if r.tenant != "" && (len(c.Identity) == 0 || c.Identity[0] != r.tenant) {
						continue
					}
					if !c.Complete {
						incomplete++
					}
					missing, surplus = missing+c.Missing, surplus+c.Surplus
				}
				return []string{strconv.Itoa(incomplete), strconv.Itoa(missing), strconv.Itoa(surplus)}
			}}
	default:
		malo := r.malos[r.rng.IntN(len(r.malos))]
		return question{kind: "single meter", hold: func(l *ledger) func() {
			m := &l.owners[l.owner(malo)]
			m.Lock()
			return m.Unlock
		},
			sql:    fmt.Sprintf(`SELECT CAST(count(*) AS VARCHAR), coalesce(CAST(sum(value) AS VARCHAR), '0') FROM readings WHERE malo_id = '%s'`, malo),
			expect: func(o *testkit.Oracle) []string { return countSum(o, r.tenant, malo) }}
	}
}

// countSum is the resolved row count and sum of the tenant's rows (every
// tenant's for ""), of one MaLo or all.
func countSum(o *testkit.Oracle, tenant, malo string) []string {
	n, sum := 0, decimal.Zero
	for _, w := range o.Winners(time.Time{}, time.Time{}) {
		if (malo != "" && w.MaloID != malo) || (tenant != "" && tenantOf(w) != tenant) {
			continue
		}
		n++
		sum = sum.Add(w.Value)
	}
	return []string{strconv.Itoa(n), sum.String()}
}

func tenantOf(r meterstore.Row) string {
	if len(r.Extra) == 0 || r.Extra[0] == nil {
		return ""
	}
	return *r.Extra[0]
}

func sleep(ctx context.Context, d time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(d):
	}
}

var noticeWatermark = regexp.MustCompile(`^meterstore: watermark (\S+)`)

// pgClient speaks pgwire; the provenance arrives as a message of level LOG
// after the rows.
type pgClient struct {
	conn   *pgx.Conn
	mu     sync.Mutex
	notice string
}

func dialPG(addr, user, password string) func(ctx context.Context) (client, error) {
	return func(ctx context.Context) (client, error) {
		cfg, err := pgx.ParseConfig(fmt.Sprintf("postgres://%s:%s@%s/meterstore?sslmode=disable", user, password, addr))
		if err != nil {
			return nil, err
		}
		c := &pgClient{}
		cfg.RuntimeParams["client_min_messages"] = "log" // the provenance's level
		cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
			c.mu.Lock()
			c.notice = n.Message
			c.mu.Unlock()
		}
		cfg.DefaultQueryExecMode = pgx.QueryExecModeSimpleProtocol
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		if c.conn, err = pgx.ConnectConfig(cctx, cfg); err != nil {
			return nil, err
		}
		return c, nil
	}
}

func (c *pgClient) query(ctx context.Context, sql string) (answer, error) {
	c.mu.Lock()
	c.notice = ""
	c.mu.Unlock()
	rows, err := c.conn.Query(ctx, sql)
	if err != nil {
		return answer{}, err
	}
	var a answer
	for rows.Next() {
		vals, err := rows.Values()
		if err != nil {
			rows.Close()
			return answer{}, err
		}
		for _, v := range vals {
			a.cols = append(a.cols, fmt.Sprint(v))
		}
	}
	if err := rows.Err(); err != nil {
		return answer{}, err
	}
	c.mu.Lock()
	notice := c.notice
	c.mu.Unlock()
	m := noticeWatermark.FindStringSubmatch(notice)
	if m == nil {
		return answer{}, fmt.Errorf("pgwire: no provenance notice after %q (got %q)", sql, notice)
	}
	a.watermark, err = time.Parse(time.RFC3339, m[1])
	return a, err
}

func (c *pgClient) close() { _ = c.conn.Close(context.Background()) }

// flightClient speaks Flight SQL; the provenance is the result schema's metadata.
type flightClient struct {
	cl  *flightsql.Client
	ctx context.Context // carries the bearer token
}

func dialFlight(addr, user, password string) func(ctx context.Context) (client, error) {
	return func(ctx context.Context) (client, error) {
		cl, err := flightsql.NewClient(addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return nil, err
		}
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		defer cancel()
		authed, err := cl.Client.AuthenticateBasicToken(cctx, user, password)
		if err != nil {
			cl.Close()
			return nil, err
		}
		md, _ := metadata.FromOutgoingContext(authed)
		return &flightClient{cl: cl, ctx: metadata.NewOutgoingContext(context.Background(), md)}, nil
	}
}

func (c *flightClient) query(ctx context.Context, sql string) (answer, error) {
	md, _ := metadata.FromOutgoingContext(c.ctx)
	ctx = metadata.NewOutgoingContext(ctx, md)
	info, err := c.cl.Execute(ctx, sql)
	if err != nil {
		return answer{}, err
	}
	var a answer
	for _, ep := range info.Endpoint {
		rdr, err := c.cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			return answer{}, err
		}
		wm, ok := rdr.Schema().Metadata().GetValue("meterstore.watermark")
		if !ok {
			rdr.Release()
			return answer{}, errors.New("flight sql: no meterstore.watermark in the result schema")
		}
		if a.watermark, err = time.Parse(time.RFC3339Nano, wm); err != nil {
			rdr.Release()
			return answer{}, err
		}
		for rdr.Next() {
			rec := rdr.RecordBatch()
			for i := 0; i < int(rec.NumRows()); i++ {
				for j := 0; j < int(rec.NumCols()); j++ {
					a.cols = append(a.cols, strings.Trim(fmt.Sprint(rec.Column(j).GetOneForMarshal(i)), `"`))
				}
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil {
			return answer{}, err
		}
	}
	return a, nil
}

func (c *flightClient) close() { _ = c.cl.Close() }
