package pgstore

import (
	"database/sql"
	"fmt"
	neturl "net/url"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/lib/pq"

	"github.com/tether-dev/tether/internal/store/backend"
)

// poolConfig is a parsed store URL: the connection settings and the bounds
// of the pool.
type poolConfig struct {
	conn        pq.Config
	maxConns    int
	maxLifetime time.Duration
	maxIdleTime time.Duration
}

// parseURL reads a postgres:// URL. Pool sizing follows the URL's
// pool_max_conns, pool_max_conn_lifetime and pool_max_conn_idle_time, with
// the defaults of earlier releases: the larger of 4 and the number of CPUs,
// one hour, 30 minutes. Without sslmode (in the URL or PGSSLMODE) TLS is
// preferred, not required. Errors never repeat the URL, which may hold a
// password.
func parseURL(url string) (poolConfig, error) {
	pc := poolConfig{maxConns: max(4, runtime.NumCPU()), maxLifetime: time.Hour, maxIdleTime: 30 * time.Minute}
	u, err := neturl.Parse(url)
	if err != nil {
		return pc, fmt.Errorf("open postgres store: parse url: %w", backend.ErrInvalid)
	}
	q := u.Query()
	for name := range q {
		if !strings.HasPrefix(name, "pool_") {
			continue
		}
		v := q.Get(name)
		q.Del(name)
		switch name {
		case "pool_max_conns":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return pc, fmt.Errorf("open postgres store: pool_max_conns must be a positive integer: %w", backend.ErrInvalid)
			}
			pc.maxConns = n
		case "pool_max_conn_lifetime", "pool_max_conn_idle_time":
			d, err := time.ParseDuration(v)
			if err != nil || d < 0 {
				return pc, fmt.Errorf("open postgres store: %s must be a duration such as 30m: %w", name, backend.ErrInvalid)
			}
			if name == "pool_max_conn_lifetime" {
				pc.maxLifetime = d
			} else {
				pc.maxIdleTime = d
			}
		default:
			return pc, fmt.Errorf("open postgres store: unsupported url parameter %s (pool_max_conns, pool_max_conn_lifetime and pool_max_conn_idle_time are): %w",
				name, backend.ErrInvalid)
		}
	}
	u.RawQuery = q.Encode()
	pc.conn, err = pq.NewConfig(u.String())
	if err != nil {
		return pc, fmt.Errorf("open postgres store: parse url: %w", backend.ErrInvalid)
	}
	if pc.conn.SSLMode == "" {
		pc.conn.SSLMode = pq.SSLModePrefer
	}
	// One round trip per statement: parameters go with the statement
	// (Parse, Bind, Execute, Sync in one message) instead of after a
	// separate Parse and Describe.
	pc.conn.BinaryParameters = true
	if pc.conn.Runtime == nil {
		pc.conn.Runtime = map[string]string{}
	}
	return pc, nil
}

// size bounds db's pool; idle connections are kept up to the pool's size.
func (pc poolConfig) size(db *sql.DB) {
	db.SetMaxOpenConns(pc.maxConns)
	db.SetMaxIdleConns(pc.maxConns)
	db.SetConnMaxLifetime(pc.maxLifetime)
	db.SetConnMaxIdleTime(pc.maxIdleTime)
}
