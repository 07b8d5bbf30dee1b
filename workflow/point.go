package workflow

import "github.com/openrecall/openrecall"

// PointTier names the tiers a result's analysis used, as its cost point
// records them: "bypass", "cheap", "strong", "cheap+strong" or "none". A
// caller that persists results one at a time (the server) builds its cost
// curve with it, as AnalyzeQueue does.
func PointTier(r openrecall.Result) openrecall.Tier { return pointTier(r) }
