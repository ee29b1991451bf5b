package app

import (
	"github.com/tether-dev/tether/internal/auth"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/preserve"
)

// policies resolves the effective continuity policy of a principal: the
// operator's per-principal override, else the global setting. Nothing in a
// request can change it.
type policies struct {
	cfg        *config.Config
	byID       map[string]config.Principal
	extractors map[string]preserve.Extractor // by extractor route
}

func (p *policies) For(pr auth.Principal) preserve.Policy {
	cc := p.cfg.Continuity
	pol := preserve.Policy{
		Enabled:        cc.Enabled,
		MaxTokens:      cc.MaxCapsuleTokens,
		Preserve:       cc.Preserve,
		Reinjection:    cc.Reinjection,
		CopyOnFork:     cc.CopyOnFork,
		BarrierTimeout: cc.BarrierTimeout,
	}
	route := cc.Extractor.Route
	extraction := config.ExtractorOn(route) && cc.SourcePolicy != "structured_only"
	if c, ok := p.byID[pr.ID]; ok && c.Continuity != nil {
		o := c.Continuity
		if o.Enabled != nil {
			pol.Enabled = *o.Enabled
		}
		if o.ExtractorRoute != "" {
			route = o.ExtractorRoute
			extraction = true
		}
		if o.Extraction != nil {
			extraction = *o.Extraction && config.ExtractorOn(route)
		}
		if o.MaxCapsuleTokens > 0 {
			pol.MaxTokens = o.MaxCapsuleTokens
		}
	}
	if extraction {
		pol.Extractor = p.extractors[route]
	}
	if pr.ID == auth.Anonymous {
		// Keyless passthrough callers share one principal: a capsule kept
		// for one would be served to any other that names the same session.
		pol.Enabled = false
	}
	return pol
}
