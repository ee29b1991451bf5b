package schema

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

func TestSchemasCompile(t *testing.T) {
	for _, tc := range []struct {
		id  string
		doc []byte
	}{{CapsuleID, Capsule()}, {OpsID, Ops()}} {
		t.Run(tc.id, func(t *testing.T) {
			var meta struct {
				ID string `json:"$id"`
			}
			if err := json.Unmarshal(tc.doc, &meta); err != nil {
				t.Fatal(err)
			}
			if meta.ID != tc.id {
				t.Fatalf("$id = %q, want %q", meta.ID, tc.id)
			}
			doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(tc.doc))
			if err != nil {
				t.Fatal(err)
			}
			c := jsonschema.NewCompiler()
			if err := c.AddResource(tc.id, doc); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Compile(tc.id); err != nil {
				t.Fatalf("compile: %v", err)
			}
		})
	}
}

func TestCopiesAreIndependent(t *testing.T) {
	a := Ops()
	a[0] = 'x'
	if Ops()[0] == 'x' {
		t.Fatal("Ops returned shared storage")
	}
}
