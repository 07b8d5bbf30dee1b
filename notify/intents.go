package notify

import (
	"github.com/openrecall/openrecall"
)

// KeyPrefix begins the key of every notification openrecall sends: the
// receivers' deduplication keys (PagerDuty's dedup_key, Opsgenie's alias,
// the Alertmanager label openrecall_episode) read as openrecall's.
const KeyPrefix = "openrecall-"

// EpisodeKey is the key of the notifications about firing episode
// episode (the analysis that opened it; openrecall.Delivery.EpisodeOf):
// its trigger, the updates of a person's decision and its resolve share
// it, so a receiver holds one alert, incident or message per episode.
func EpisodeKey(episode string) string { return KeyPrefix + episode }

// Intents returns the product's rule for what a stored result notifies
// (DESIGN §12b), over the route tree root and the configured receivers:
//
//   - a triaged result triggers every receiver its routes reach;
//   - a sender's recovery (a resolved alert, not triaged) resolves the
//     episode at every receiver — the store writes the resolve only where
//     the receiver has the episode's trigger, so a recovery is news only
//     to whoever heard of the alert;
//   - anything else (an acknowledgement, a sender's notice, a rejected
//     record) notifies no one.
//
// A person's decision is the store's to notify: it writes an update for
// each trigger of the decided analysis (memory.Decisions.Decide). The key
// of every intent is EpisodeKey(episode). A nil root notifies no one.
func Intents(root *Route, receivers []string) func(r openrecall.Result, episode string) []openrecall.Intent {
	return func(r openrecall.Result, episode string) []openrecall.Intent {
		if root == nil {
			return nil
		}
		key := EpisodeKey(episode)
		var out []openrecall.Intent
		switch {
		case r.Outcome == openrecall.ResultTriaged:
			for _, m := range root.Receivers(SubjectOf(r)) {
				out = append(out, openrecall.Intent{Receiver: m.Receiver, Kind: openrecall.IntentTrigger, Key: key})
			}
		case r.Outcome == openrecall.ResultResolved && r.Alert.Status == openrecall.StatusResolved:
			for _, name := range receivers {
				out = append(out, openrecall.Intent{Receiver: name, Kind: openrecall.IntentResolve, Key: key})
			}
		}
		return out
	}
}
