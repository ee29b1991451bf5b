package main

import "context"

// extraTargets returns further proxy variants to measure beside the core.
func extraTargets(context.Context) []struct {
	name string
	make makeTarget
} {
	return nil
}
