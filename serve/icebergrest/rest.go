package icebergrest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"math/big"
	"net/http"
	"strings"
	"sync"
	"time"

	icecat "github.com/apache/iceberg-go/catalog"
	"github.com/apache/iceberg-go/table"
	"github.com/apache/iceberg-go/view"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"

	"github.com/meterstore/meterstore"
	"github.com/meterstore/meterstore/internal/telemetry"
	"github.com/meterstore/meterstore/serve/access"
)

// Server is a read-only Iceberg REST catalog façade over the deployment's
// cold tables, so Spark, Trino, PyIceberg or DuckDB's iceberg extension read
// the history straight from object storage, with MeterStore out of the data
// path. It has no write path — not a write path that is disabled: every
// mutation answers 405 with the reason (an external writer would place rows
// in the cold tier without MeterStore knowing, and nothing downstream could
// detect it), not 501, which would invite a retry against a future version.
// Responses carry no object-store credentials: they say where the data is,
// not how to authenticate to it.
//
// Routes (Iceberg REST spec, no prefix):
//
//	GET  /v1/config
//	POST /v1/oauth/tokens                        client_credentials → bearer token (the one POST that is not a mutation)
//	GET  /v1/namespaces                          HEAD/GET /v1/namespaces/{ns}
//	GET  /v1/namespaces/{ns}/tables              HEAD/GET /v1/namespaces/{ns}/tables/{table}
//	GET  /v1/namespaces/{ns}/views               GET /v1/namespaces/{ns}/views/{view} (when the catalog keeps views)
//	GET  /v1/meterstore/resolution               the published resolution SQL of every table (JSON)
//	GET  /v1/meterstore/resolution/{table}       one table's resolution SQL (text/plain; ?format=json for JSON)
//	GET  /healthz, /readyz                       liveness, readiness (no authentication)
//
// A user bound to a scope is refused (403): the files hold every tenant's
// rows, so the catalog cannot be handed to a confined user.
type Server struct {
	Catalog icecat.Catalog
	// Tables lists the tables whose resolution SQL is published, read at
	// each request: a table re-declared while serving publishes its new SQL.
	Tables func() []meterstore.TableConfig
	Users  *access.Users
	Log    *slog.Logger
	// Ready reports readiness (nil: always ready).
	Ready func(ctx context.Context) error

	mu     sync.Mutex
	tokens map[string]string
}

// ReasonNoWrites is the 405 body of every mutating request.
const ReasonNoWrites = "this Iceberg REST catalog is read-only: an external writer would place rows in the cold tier " +
	"without MeterStore knowing (bypassing the watermark, the tier routing and the subject check), and nothing downstream " +
	"could detect it. Write through MeterStore's append."

type restError struct {
	Error struct {
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	} `json:"error"`
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	json.NewEncoder(w).Encode(v)
}

func newRESTError(code int, typ, msg string) restError {
	var e restError
	e.Error.Message, e.Error.Type, e.Error.Code = msg, typ, code
	return e
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	writeJSON(w, code, newRESTError(code, typ, msg))
}

// writeViewNotFound answers a views route's 404 in both shapes the spec gives
// it: the schema of these responses is ErrorModel itself (message, type and
// code at the top level), while the spec's examples for them, every other
// route and every client use the {"error": ErrorModel} wrapper.
func writeViewNotFound(w http.ResponseWriter, typ string, err error) {
	if !isNotFound(err) {
		writeError(w, http.StatusInternalServerError, "InternalServerError", err.Error())
		return
	}
	e := newRESTError(http.StatusNotFound, typ, err.Error())
	writeJSON(w, http.StatusNotFound, struct {
		restError
		Message string `json:"message"`
		Type    string `json:"type"`
		Code    int    `json:"code"`
	}{e, e.Error.Message, e.Error.Type, e.Error.Code})
}

// Handler is the façade's routes.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { fmt.Fprintln(w, "ok") })
	mux.HandleFunc("GET /readyz", func(w http.ResponseWriter, r *http.Request) {
		if s.Ready != nil {
			if err := s.Ready(r.Context()); err != nil {
				http.Error(w, "not ready: "+err.Error(), http.StatusServiceUnavailable)
				return
			}
		}
		fmt.Fprintln(w, "ready")
	})
	mux.HandleFunc("POST /v1/oauth/tokens", s.token)
	api := http.NewServeMux()
	api.HandleFunc("GET /v1/config", func(w http.ResponseWriter, r *http.Request) {
		// The endpoints list is authoritative for a client: it advertises the
		// read routes only, so a spec-following client never attempts a write.
		writeJSON(w, 200, map[string]any{"defaults": map[string]string{}, "overrides": map[string]string{}, "endpoints": readEndpoints})
	})
	api.HandleFunc("GET /v1/namespaces", paged(s.listNamespaces))
	api.HandleFunc("GET /v1/namespaces/{ns}", s.getNamespace)
	api.HandleFunc("HEAD /v1/namespaces/{ns}", s.getNamespace)
	api.HandleFunc("GET /v1/namespaces/{ns}/tables", paged(s.listTables))
	api.HandleFunc("GET /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	api.HandleFunc("HEAD /v1/namespaces/{ns}/tables/{table}", s.loadTable)
	api.HandleFunc("GET /v1/namespaces/{ns}/views", paged(s.listViews))
	api.HandleFunc("GET /v1/namespaces/{ns}/views/{view}", s.loadView)
	api.HandleFunc("GET /v1/meterstore/resolution", s.resolutionAll)
	api.HandleFunc("GET /v1/meterstore/resolution/{table}", s.resolution)
	for _, route := range mutationOnlyRoutes {
		api.HandleFunc(route, func(w http.ResponseWriter, r *http.Request) { refuseWrite(w, "") })
	}
	api.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			refuseWrite(w, "GET, HEAD")
			return
		}
		writeError(w, http.StatusNotFound, "NotFoundException", "no such route: "+r.URL.Path)
	})
	mux.Handle("/v1/", s.auth(api))
	// http.server.request.duration by route and status, the semantic
	// conventions' HTTP server metric; the server name keeps a client's Host
	// header out of the attributes.
	return otelhttp.NewHandler(s.recovering(s.logged(mux)), "iceberg-rest",
		otelhttp.WithMeterProvider(telemetry.MeterProvider()), otelhttp.WithServerName("iceberg-rest"))
}

// paged checks a listing's pageSize as the spec declares it (an integer of at
// least 1, of any size) and then answers the whole listing: the façade does not paginate,
// and the spec has such a server ignore pageToken and omit next-page-token.
func paged(list http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if sizes, ok := r.URL.Query()["pageSize"]; ok {
			for _, size := range sizes {
				if n, ok := new(big.Int).SetString(size, 10); !ok || n.Sign() < 1 {
					writeError(w, http.StatusBadRequest, "BadRequestException",
						fmt.Sprintf("pageSize %q is not a whole number of at least 1; omit it to list everything", size))
					return
				}
			}
		}
		list(w, r)
	}
}

// mutationOnlyRoutes are the specification's routes that have no read method:
// every method on them is refused (405, Allow empty), not answered 404 as a
// route that does not exist.
var mutationOnlyRoutes = []string{
	"/v1/tables/rename", "/v1/views/rename", "/v1/transactions/commit",
	"/v1/namespaces/{ns}/properties", "/v1/namespaces/{ns}/register",
	"/v1/namespaces/{ns}/tables/{table}/metrics", "/v1/namespaces/{ns}/tables/{table}/plan",
	"/v1/namespaces/{ns}/tables/{table}/tasks",
}

// refuseWrite answers 405 with the read-only reason; allow lists the methods
// the route does serve (RFC 9110: an empty Allow means none).
func refuseWrite(w http.ResponseWriter, allow string) {
	w.Header().Set("Allow", allow)
	writeError(w, http.StatusMethodNotAllowed, "MethodNotAllowed", ReasonNoWrites)
}

func (s *Server) logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		h.ServeHTTP(w, r)
		if s.Log != nil && r.URL.Path != "/healthz" && r.URL.Path != "/readyz" {
			s.Log.Info("iceberg-rest", "method", r.Method, "path", r.URL.Path, "duration_ms", float64(time.Since(start).Microseconds())/1000)
		}
	})
}

// recovering answers a request whose handling panicked with a 500 (the stack
// goes to the log); the server keeps serving the others. An aborted handler
// (http.ErrAbortHandler) stays aborted.
func (s *Server) recovering(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			p := recover()
			if p == nil {
				return
			}
			if p == http.ErrAbortHandler {
				panic(p)
			}
			msg := access.LogPanic(access.OrDiscard(s.Log), "iceberg-rest", p, "method", r.Method, "path", r.URL.Path)
			writeError(w, http.StatusInternalServerError, "InternalServerError", msg)
		}()
		h.ServeHTTP(w, r)
	})
}

// auth admits Basic credentials or a bearer token from /v1/oauth/tokens, and
// refuses scoped users.
func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.Users.Enabled() {
			h.ServeHTTP(w, r)
			return
		}
		var user string
		scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		switch {
		case strings.EqualFold(scheme, "basic"):
			u, p, ok := r.BasicAuth()
			if ok && s.Users.Login(r.Context(), u, p, r.RemoteAddr) {
				user = u
			}
		case strings.EqualFold(scheme, "bearer"):
			s.mu.Lock()
			user = s.tokens[strings.TrimSpace(cred)]
			s.mu.Unlock()
		}
		if user == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="meterstore"`)
			writeError(w, http.StatusUnauthorized, "NotAuthorizedException", "authentication required (Basic, or a bearer token from /v1/oauth/tokens)")
			return
		}
		if us, _ := s.Users.Lookup(user); strings.TrimSpace(us.Scope) != "" {
			writeError(w, http.StatusForbidden, "ForbiddenException", fmt.Sprintf(
				"user %q is confined to %s: the catalog's files hold every scope's rows, so it is not served to a confined user; query through pgwire or Flight SQL", user, us.Scope))
			return
		}
		h.ServeHTTP(w, r)
	})
}

// token is the OAuth2 client-credentials exchange iceberg-go, PyIceberg and
// Spark use (client_id = user name, client_secret = password).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, 400, map[string]string{"error": "invalid_request"})
		return
	}
	id, secret := r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	if u, p, ok := r.BasicAuth(); ok && id == "" {
		id, secret = u, p
	}
	if r.PostForm.Get("grant_type") != "client_credentials" || !s.Users.Login(r.Context(), id, secret, r.RemoteAddr) {
		writeJSON(w, 401, map[string]string{"error": "invalid_client"})
		return
	}
	b := make([]byte, 24)
	rand.Read(b)
	tok := hex.EncodeToString(b)
	s.mu.Lock()
	if s.tokens == nil {
		s.tokens = map[string]string{}
	}
	s.tokens[tok] = id
	s.mu.Unlock()
	writeJSON(w, 200, map[string]any{"access_token": tok, "token_type": "bearer", "expires_in": 86400,
		"issued_token_type": "urn:ietf:params:oauth:token-type:access_token"})
}

func namespaceOf(r *http.Request) table.Identifier {
	return strings.Split(r.PathValue("ns"), "\x1f")
}

func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	var parent table.Identifier
	if p := r.URL.Query().Get("parent"); p != "" {
		parent = strings.Split(p, "\x1f")
	}
	nss, err := s.Catalog.ListNamespaces(r.Context(), parent)
	if err != nil {
		s.notFound(w, r, "NoSuchNamespaceException", err)
		return
	}
	out := make([][]string, 0, len(nss))
	for _, ns := range nss {
		out = append(out, ns)
	}
	writeJSON(w, 200, map[string]any{"namespaces": out})
}

func (s *Server) getNamespace(w http.ResponseWriter, r *http.Request) {
	ns := namespaceOf(r)
	props, err := s.Catalog.LoadNamespaceProperties(r.Context(), ns)
	if err != nil {
		s.notFound(w, r, "NoSuchNamespaceException", err)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeJSON(w, 200, map[string]any{"namespace": ns, "properties": scrub(props)})
}

// isNotFound tells a catalog's missing namespace, table or view from a
// failure of the catalog itself.
func isNotFound(err error) bool {
	msg := strings.ToLower(err.Error())
	return errors.Is(err, icecat.ErrNoSuchNamespace) || errors.Is(err, icecat.ErrNoSuchTable) || errors.Is(err, icecat.ErrNoSuchView) ||
		strings.Contains(msg, "not found") || strings.Contains(msg, "does not exist")
}

func (s *Server) notFound(w http.ResponseWriter, r *http.Request, typ string, err error) {
	if isNotFound(err) {
		if r.Method == http.MethodHead {
			w.Header().Set("Content-Type", "application/json") // the spec's 404 is JSON; HEAD sends no body
			w.WriteHeader(404)
			return
		}
		writeError(w, 404, typ, err.Error())
		return
	}
	writeError(w, 500, "InternalServerError", err.Error())
}

type restIdent struct {
	Namespace []string `json:"namespace"`
	Name      string   `json:"name"`
}

func collect(seq iter.Seq2[table.Identifier, error]) ([]restIdent, error) {
	out := []restIdent{}
	for id, err := range seq {
		if err != nil {
			return nil, err
		}
		out = append(out, restIdent{Namespace: id[:len(id)-1], Name: id[len(id)-1]})
	}
	return out, nil
}

func (s *Server) listTables(w http.ResponseWriter, r *http.Request) {
	ids, err := collect(s.Catalog.ListTables(r.Context(), namespaceOf(r)))
	if err != nil {
		s.notFound(w, r, "NoSuchNamespaceException", err)
		return
	}
	writeJSON(w, 200, map[string]any{"identifiers": ids})
}

func (s *Server) loadTable(w http.ResponseWriter, r *http.Request) {
	id := append(namespaceOf(r), r.PathValue("table"))
	tbl, err := s.Catalog.LoadTable(r.Context(), id)
	if err != nil {
		s.notFound(w, r, "NoSuchTableException", err)
		return
	}
	if r.Method == http.MethodHead {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	raw, err := json.Marshal(tbl.Metadata())
	if err != nil {
		writeError(w, 500, "InternalServerError", err.Error())
		return
	}
	var md map[string]any
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // snapshot ids are int64: float64 would corrupt them
	if err := dec.Decode(&md); err != nil {
		writeError(w, 500, "InternalServerError", err.Error())
		return
	}
	if p, ok := md["properties"].(map[string]any); ok {
		for k := range p {
			if secretKey(k) {
				delete(p, k)
			}
		}
	}
	// "config" is where a catalog would hand out storage credentials; this
	// one never does.
	writeJSON(w, 200, map[string]any{"metadata-location": tbl.MetadataLocation(), "metadata": md, "config": map[string]string{}})
}

// readEndpoints are the Iceberg REST routes the façade serves, as the spec
// spells them in the config response.
var readEndpoints = []string{
	"GET /v1/{prefix}/namespaces",
	"GET /v1/{prefix}/namespaces/{namespace}",
	"HEAD /v1/{prefix}/namespaces/{namespace}",
	"GET /v1/{prefix}/namespaces/{namespace}/tables",
	"GET /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"HEAD /v1/{prefix}/namespaces/{namespace}/tables/{table}",
	"GET /v1/{prefix}/namespaces/{namespace}/views",
	"GET /v1/{prefix}/namespaces/{namespace}/views/{view}",
}

// viewCatalog is the part of a catalog that keeps Iceberg views (iceberg-go's
// SQL catalog does).
type viewCatalog interface {
	ListViews(ctx context.Context, namespace table.Identifier) iter.Seq2[table.Identifier, error]
	LoadView(ctx context.Context, identifier table.Identifier) (view.Metadata, error)
}

func (s *Server) listViews(w http.ResponseWriter, r *http.Request) {
	vc, ok := s.Catalog.(viewCatalog)
	if !ok {
		writeJSON(w, 200, map[string]any{"identifiers": []restIdent{}})
		return
	}
	ids, err := collect(vc.ListViews(r.Context(), namespaceOf(r)))
	if err != nil {
		writeViewNotFound(w, "NoSuchNamespaceException", err)
		return
	}
	writeJSON(w, 200, map[string]any{"identifiers": ids})
}

func (s *Server) loadView(w http.ResponseWriter, r *http.Request) {
	vc, ok := s.Catalog.(viewCatalog)
	if !ok {
		writeViewNotFound(w, "NoSuchViewException", fmt.Errorf("view %s: %w: this catalog keeps no views", r.PathValue("view"), icecat.ErrNoSuchView))
		return
	}
	md, err := vc.LoadView(r.Context(), append(namespaceOf(r), r.PathValue("view")))
	if err != nil {
		writeViewNotFound(w, "NoSuchViewException", err)
		return
	}
	writeJSON(w, 200, map[string]any{"metadata-location": md.Location(), "metadata": md, "config": map[string]string{}})
}

func (s *Server) tableConfig(name string) (meterstore.TableConfig, bool) {
	for _, t := range s.Tables() {
		if strings.EqualFold(t.Name(), name) || strings.EqualFold(t.ResolvedName(), name) {
			return t, true
		}
	}
	return meterstore.TableConfig{}, false
}

// resolution publishes a table's resolution SQL: run over the table's files
// by any engine, it gives MeterStore's own answer (the naive sum over the same
// files overstates wherever a reading was corrected).
func (s *Server) resolution(w http.ResponseWriter, r *http.Request) {
	t, ok := s.tableConfig(r.PathValue("table"))
	if !ok {
		writeError(w, 404, "NoSuchTableException", "no table "+r.PathValue("table"))
		return
	}
	if r.URL.Query().Get("format") == "json" {
		writeJSON(w, 200, resolutionEntry(t))
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintln(w, t.ResolutionSQL())
}

func resolutionEntry(t meterstore.TableConfig) map[string]any {
	return map[string]any{"table": t.Name(), "resolved_name": t.ResolvedName(), "merge_key": t.MergeKey(),
		"resolution_sql": t.ResolutionSQL(), "template": meterstore.ResolutionTemplate()}
}

func (s *Server) resolutionAll(w http.ResponseWriter, r *http.Request) {
	out := []map[string]any{}
	for _, t := range s.Tables() {
		out = append(out, resolutionEntry(t))
	}
	writeJSON(w, 200, map[string]any{"tables": out})
}

func secretKey(k string) bool {
	k = strings.ToLower(k)
	for _, s := range []string{"secret", "access-key", "access_key", "token", "password", "credential", "session-key"} {
		if strings.Contains(k, s) {
			return true
		}
	}
	return false
}

func scrub(p map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range p {
		if !secretKey(k) {
			out[k] = v
		}
	}
	return out
}
