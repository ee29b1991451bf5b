package app

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/tether-dev/tether/internal/config"
)

// A memory store keeps its generated secret in the process only: whatever
// spelling of the URL, nothing is written to the working directory. A
// SQLite store keeps it beside the database file.
func TestGeneratedSecretLocation(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, url := range []string{"memory", "memory:", "memory://"} {
		if _, err := loadSecret(&config.Config{Store: url}); err != nil {
			t.Fatalf("%s: %v", url, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Fatalf("store %q wrote %s into the working directory", url, entries[0].Name())
		}
	}
	db := filepath.Join(t.TempDir(), "state", "tether.db")
	first, err := loadSecret(&config.Config{Store: "sqlite://" + db})
	if err != nil {
		t.Fatal(err)
	}
	again, err := loadSecret(&config.Config{Store: db})
	if err != nil || string(again) != string(first) {
		t.Fatalf("the SQLite store's secret was not kept beside it (%v)", err)
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(db), "secret")); err != nil {
		t.Fatal(err)
	}
}
