package extract

import "github.com/tether-dev/tether/internal/capsule"

// originOf is the provenance of the ops c produces: the built-in extractor
// reads the statements the user marked; any other caller is a model.
func originOf(c Caller) string {
	if _, ok := c.(MarkersCaller); ok {
		return capsule.ProvenanceMarked
	}
	return capsule.ProvenanceModel
}

// validateFrom validates what c returned and stamps each op with c's
// origin, so the capsule records which extractor each item came from.
func validateFrom(c Caller, raw []byte, in Input) ([]capsule.Op, error) {
	ops, err := Validate(raw, in)
	if err != nil {
		return nil, err
	}
	origin := originOf(c)
	for i := range ops {
		ops[i].Origin = origin
	}
	return ops, nil
}
