package main

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEveryPackageHasDocComment keeps the package documentation complete:
// each package under internal/, cmd/ and schema/ has a package comment.
func TestEveryPackageHasDocComment(t *testing.T) {
	root := filepath.Join("..", "..")
	dirs := map[string][]string{} // package directory → its non-test files
	for _, top := range []string{"internal", "cmd", "schema", "prompts"} {
		_ = filepath.WalkDir(filepath.Join(root, top), func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return nil
			}
			if d.IsDir() && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			if !d.IsDir() && strings.HasSuffix(p, ".go") && !strings.HasSuffix(p, "_test.go") {
				dirs[filepath.Dir(p)] = append(dirs[filepath.Dir(p)], p)
			}
			return nil
		})
	}
	if len(dirs) < 5 {
		t.Fatalf("found only %d packages; is the test running from cmd/tether?", len(dirs))
	}
	for dir, files := range dirs {
		fset := token.NewFileSet()
		documented := map[string]bool{} // package name → has a doc comment
		for _, file := range files {
			f, err := parser.ParseFile(fset, file, nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				t.Errorf("%s: %v", file, err)
				continue
			}
			documented[f.Name.Name] = documented[f.Name.Name] || f.Doc != nil && strings.TrimSpace(f.Doc.Text()) != ""
		}
		for name, ok := range documented {
			if !ok {
				t.Errorf("package %s (%s) has no package doc comment", name, dir)
			}
		}
	}
}
