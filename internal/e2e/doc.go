// Package e2e holds Tether's end-to-end scenarios: the scripted model on
// 127.0.0.1, the assembled proxy over real HTTP, and agents speaking the real
// wire formats. The acceptance-criterion tests (TestACnn_…) live here.
package e2e
