// Package replicas holds the test of several Tether replicas behind a
// round-robin balancer on one PostgreSQL store: every request of a
// conversation lands on the next replica, one replica is killed mid-run,
// and what the agent sees, the capsules, their revisions and the ledger must
// equal a single process's run. It has no non-test code.
package replicas
