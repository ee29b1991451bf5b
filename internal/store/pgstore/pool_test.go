package pgstore

import (
	"errors"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/tether-dev/tether/internal/store/backend"
	"github.com/tether-dev/tether/internal/store/storetest"
)

func TestParseURL(t *testing.T) {
	pc, err := parseURL("postgres://tether:hunter2@db.internal:5432/tether?application_name=x")
	if err != nil {
		t.Fatalf("parseURL: %v", err)
	}
	if pc.maxConns != max(4, runtime.NumCPU()) || pc.maxLifetime != time.Hour || pc.maxIdleTime != 30*time.Minute {
		t.Errorf("default pool = %d conns, lifetime %v, idle %v; want max(4, CPUs), 1h, 30m", pc.maxConns, pc.maxLifetime, pc.maxIdleTime)
	}
	if pc.conn.SSLMode != pq.SSLModePrefer {
		t.Errorf("sslmode without one in the URL = %q, want prefer", pc.conn.SSLMode)
	}
	if !pc.conn.BinaryParameters {
		t.Error("parameters are not sent with their statement (binary_parameters off): two round trips a statement")
	}

	pc, err = parseURL("postgres://u@h/db?sslmode=disable&pool_max_conns=7&pool_max_conn_lifetime=5m&pool_max_conn_idle_time=1m&search_path=s1")
	if err != nil {
		t.Fatalf("parseURL: %v", err)
	}
	if pc.maxConns != 7 || pc.maxLifetime != 5*time.Minute || pc.maxIdleTime != time.Minute {
		t.Errorf("pool = %d conns, lifetime %v, idle %v; want 7, 5m, 1m", pc.maxConns, pc.maxLifetime, pc.maxIdleTime)
	}
	if pc.conn.SSLMode != pq.SSLModeDisable || pc.conn.Runtime["search_path"] != "s1" {
		t.Errorf("sslmode %q, runtime parameters %v; want disable and search_path=s1", pc.conn.SSLMode, pc.conn.Runtime)
	}
	for k := range pc.conn.Runtime {
		if strings.HasPrefix(k, "pool_") {
			t.Errorf("pool parameter %s would be sent to the server", k)
		}
	}

	for _, bad := range []string{
		"postgres://u:hunter2@h/db?pool_max_conns=0",
		"postgres://u:hunter2@h/db?pool_max_conn_lifetime=soon",
		"postgres://u:hunter2@h/db?pool_min_conns=2",
	} {
		_, err := parseURL(bad)
		if !errors.Is(err, backend.ErrInvalid) {
			t.Errorf("parseURL(%q) = %v, want ErrInvalid", bad, err)
		} else if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error leaks the password: %v", err)
		}
	}
}

// TestSchemaOnEveryConnection: every connection of the pool, not only the
// first, works in Options.Schema.
func TestSchemaOnEveryConnection(t *testing.T) {
	url := storetest.PostgresURL(t)
	schema := storetest.FreshSchema(t, url, "tether_test")
	s, err := Open(t.Context(), url, Options{Schema: schema, MaxConns: 3})
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	defer func() { _ = s.Close() }()
	ctx := t.Context()
	pids := map[int]bool{}
	for range 3 {
		c, err := s.db.Conn(ctx)
		if err != nil {
			t.Fatalf("Conn: %v", err)
		}
		defer func() { _ = c.Close() }()
		var pid int
		var current string
		if err := c.QueryRowContext(ctx, `SELECT pg_backend_pid(), current_schema()`).Scan(&pid, &current); err != nil {
			t.Fatalf("query: %v", err)
		}
		pids[pid] = true
		if current != schema {
			t.Errorf("connection %d works in schema %q, want %q", pid, current, schema)
		}
	}
	if len(pids) != 3 {
		t.Errorf("%d distinct connections, want 3", len(pids))
	}
	if got := s.db.Stats().MaxOpenConnections; got != 3 {
		t.Errorf("pool bound = %d, want Options.MaxConns 3", got)
	}
}
